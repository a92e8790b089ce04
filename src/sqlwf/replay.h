/*-------------------------------------------------------------------------
 *
 * replay.h
 *	  Replaying a SQL workflow function against its history (replay.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_SQLWF_REPLAY_H
#define DURABLE_SQLWF_REPLAY_H

#include "store/registry.h"
#include "engine/runs.h"

typedef enum ReplayOutcome
{
	REPLAY_DECIDED,				/* decisions made (maybe closing the run) */
	REPLAY_NON_DETERMINISTIC,	/* history disagrees with the code */
	REPLAY_TIMED_OUT			/* the function ran past the decision timeout */
} ReplayOutcome;


extern Jsonb *ErrorDetailsJson(ErrorData *edata);
extern ReplayOutcome ReplayWorkflow(RunState *rs, Registration *reg,
									TimestampTz now, Jsonb **decisions,
									Jsonb **failure);
extern bool ReplayActive(void);
extern TimestampTz ReplayNow(void);

#endif							/* DURABLE_SQLWF_REPLAY_H */
