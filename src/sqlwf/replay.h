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


/* A run's history kept across the decision tasks of a chain (replay.c) */
typedef struct ReplayHistory ReplayHistory;

extern Jsonb *ErrorDetailsJson(ErrorData *edata);
extern ReplayHistory *ReplayHistoryCreate(MemoryContext parent);
extern void ReplayHistoryFree(ReplayHistory *history);
extern ReplayOutcome ReplayWorkflow(RunState *rs, Registration *reg,
									TimestampTz now, ReplayHistory *history,
									Jsonb **decisions, Jsonb **failure);
/* What replay_check() found for one run (ReplayCheck) */
typedef struct ReplayCheckResult
{
	bool		ok;				/* the function follows the history */
	int64		event_id;		/* else where they part (0: unknown) */
	char	   *history;		/* what history has there */
	char	   *code;			/* what the function did */
	char	   *message;
} ReplayCheckResult;

extern void ReplayCheck(RunState *rs, Oid function, Oid run_as,
						TimestampTz now, ReplayCheckResult *out);
extern bool ReplayActive(void);
extern TimestampTz ReplayNow(void);

#endif							/* DURABLE_SQLWF_REPLAY_H */
