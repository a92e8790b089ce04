/*-------------------------------------------------------------------------
 *
 * lifecycle.h
 *	  What a closing run does to its children and its parent: private to engine/workflow.c and engine/children.c, the one cycle of calls in src/ (scripts/check-layers names it).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_LIFECYCLE_H
#define DURABLE_ENGINE_LIFECYCLE_H

#include "engine/runs.h"

extern void NotifyParentOfClose(RunState *rs, TimestampTz now,
								const char *status, Jsonb *attributes);
extern void ApplyParentClosePolicies(RunState *rs, TimestampTz now);

#endif							/* DURABLE_ENGINE_LIFECYCLE_H */
