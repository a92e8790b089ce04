/*-------------------------------------------------------------------------
 *
 * index_info.h
 *	  The indexes of a table durable writes directly, opened for inserts
 *	  with their descriptions built once per backend.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_INDEX_INFO_H
#define DURABLE_INDEX_INFO_H

#include "nodes/execnodes.h"

extern void OpenIndicesKeptInfo(ResultRelInfo *rri);

#endif							/* DURABLE_INDEX_INFO_H */
