/*-------------------------------------------------------------------------
 *
 * invalidation.h
 *	  One relcache callback slot for all of durable's caches
 *	  (invalidation.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BASE_INVALIDATION_H
#define DURABLE_BASE_INVALIDATION_H

#include "utils/inval.h"

extern void DurableRegisterRelcacheCallback(RelcacheCallbackFunction func,
											Datum arg);

#endif							/* DURABLE_BASE_INVALIDATION_H */
