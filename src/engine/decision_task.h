/*-------------------------------------------------------------------------
 *
 * decision_task.h
 *	  The decision task of a run: started, completed, failed, timed out (decision_task.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_DECISION_TASK_H
#define DURABLE_ENGINE_DECISION_TASK_H

#include "engine/decisions.h"
#include "engine/runs.h"

extern bool DecisionTimeoutFired(RunState *rs, TimestampTz now);
extern bool DecisionTaskTimedOut(RunState *rs, TimestampTz now,
								 int64 started_id);
extern bool StartDecisionTask(RunState *rs, int64 scheduled_id,
							  TimestampTz now, const char *identity,
							  bool save);
extern bool StartTakenDecisionTask(RunState *rs, TimestampTz now,
								   const char *identity);
extern bool CompleteDecisionTask(RunState *rs, TimestampTz now, Decision *list,
								 int n, const char *identity);
extern void FailDecisionTask(RunState *rs, TimestampTz now, const char *cause,
							 Jsonb *details, const char *identity,
							 bool backoff);
extern void TerminateForOversizedDecision(RunState *rs, TimestampTz now,
										  const char *identity,
										  DecisionOverLimit *over);
extern Jsonb *DecisionTaskJson(RunState *rs, const char *token, int64 history_after,
							   const char *identity);
extern JsonbValue *DecisionTaskPush(JsonbParseState **st, RunState *rs,
									const char *token, int64 history_after,
									const char *identity);
extern Jsonb *HistoryJson(pg_uuid_t *run_id);

#endif							/* DURABLE_ENGINE_DECISION_TASK_H */
