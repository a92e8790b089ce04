/*-------------------------------------------------------------------------
 *
 * decisions.h
 *	  Decisions of a completed decision task (decisions.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_DECISIONS_H
#define DURABLE_ENGINE_DECISIONS_H

#include "engine/runs.h"

typedef struct Decision Decision;

extern int	ParseDecisions(RunState *rs, Jsonb *decisions, Decision **out);

/* A decision's payload over durable.max_payload_size (message NULL: none) */
typedef struct DecisionOverLimit
{
	char	   *message;
	const char *cause;			/* DecisionTaskFailed's cause */
} DecisionOverLimit;

extern int	ParseDecisionsOverLimit(RunState *rs, Jsonb *decisions,
									Decision **out, DecisionOverLimit *over);
extern void SetDecisionLabel(const char *label);
extern bool DecisionsCloseRun(Decision *list, int n);
extern bool DecisionsLeaveUnhandledEvents(RunState *rs, Decision *list, int n);
extern void ApplyDecisions(RunState *rs, TimestampTz now, Decision *list,
						   int n, int64 completed_id);

#endif							/* DURABLE_ENGINE_DECISIONS_H */
