/*-------------------------------------------------------------------------
 *
 * replay_check.h
 *	  New code of a workflow type replayed against its runs' histories
 *	  (replay_check.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_SQLWF_REPLAY_CHECK_H
#define DURABLE_SQLWF_REPLAY_CHECK_H

#include "utils/palloc.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"
#include "sqlwf/replay.h"

extern bool ReplayCheckRun(const char *namespace, const char *type_name,
						   const char *workflow_id, pg_uuid_t *run_id,
						   Oid function, Oid caller, TimestampTz now,
						   MemoryContext outcxt, ReplayCheckResult *r,
						   bool *gone);

#endif							/* DURABLE_SQLWF_REPLAY_CHECK_H */
