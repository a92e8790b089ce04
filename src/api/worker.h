/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  The worker API: polls, task tokens, answers (worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_API_WORKER_H
#define DURABLE_API_WORKER_H

#include "utils/jsonb.h"
#include "utils/uuid.h"

#include "engine/runs.h"

extern bool HandOverTakenDecision(RunState *rs, TimestampTz now,
								  const char *identity);
extern Datum EagerStartResult(pg_uuid_t *run_id, RunState *decision_rs,
							   const char *identity);

#endif							/* DURABLE_API_WORKER_H */
