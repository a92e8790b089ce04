/*-------------------------------------------------------------------------
 *
 * direct.h
 *	  Rows written and read without the executor (direct.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_DIRECT_H
#define DURABLE_STORE_DIRECT_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "storage/itemptr.h"
#include "storage/lockdefs.h"
#include "utils/jsonb.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"
#include "store/claim_order.h"

extern void DirectInsertEvents(pg_uuid_t *run_id, int n, const int64 *ids,
							   const TimestampTz *times, char *const *types,
							   const Datum *attrs);
extern void DirectInsertReadyTasks(const char *namespace, pg_uuid_t *run_id,
								   int n, char *const *queues,
								   const char *kinds, const int64 *scheduled,
								   const int32 *attempts,
								   const int16 *priorities,
								   char *const *keys);
extern struct TupleTableSlot *DirectLockRun(pg_uuid_t *run_id,
											bool skip_locked);
extern struct TupleTableSlot *DirectFetchRun(pg_uuid_t *run_id);
/* A task a claim took (DirectClaimReadyTask) */
typedef struct ClaimedTask
{
	pg_uuid_t	run_id;
	int64		scheduled_event_id;
	int32		attempt;
	int64		task_id;
	int			priority;		/* 1 (first) to 5 */
	char		concurrency_key[CLAIM_KEY_MAX];	/* "" for none */
} ClaimedTask;

/*
 * What a claim asks about a concurrency key before it takes one of its
 * tasks (task_limits.c): whether its limits admit one more start, and its
 * weight in the round robin (NULL: 1).  Never asked of "" (no key).
 */
typedef struct ClaimKeyPolicy
{
	bool		(*admit) (const char *key, void *arg);
	int32		(*weight) (const char *key, void *arg);
	void	   *arg;
} ClaimKeyPolicy;

extern bool DirectClaimReadyTask(const char *namespace, const char *task_queue,
								 char kind, const ClaimKeyPolicy *policy,
								 ClaimedTask *task);
/* A run's next executor task, for a chain (DirectClaimRunTask) */
typedef struct RunTask
{
	ClaimedTask claimed;
	char	   *namespace;
	char	   *task_queue;
	char		kind;			/* 'w' or 'x' */
	ItemPointerData tid;		/* its row (a task held for its limits) */
} RunTask;

/* Whether a queue's tasks of a kind pass limits before a chain takes one */
typedef bool (*RunTaskLimited) (const char *namespace, const char *task_queue,
								char kind);

extern int	DirectClaimRunTask(pg_uuid_t *run_id, RunTaskLimited limited,
							   RunTask *task);
extern void DirectDeleteHeldTask(RunTask *task);
extern void DirectWriteKeptTask(void);
extern bool DirectRunHasRows(const char *relname, pg_uuid_t *run_id);
extern int	DirectWorkflowHasRuns(const char *namespace,
								  const char *workflow_id);
extern HeapTuple DirectStartActivityAttempt(pg_uuid_t *run_id,
											int64 scheduled_event_id,
											int32 attempt, TimestampTz now,
											const char *identity,
											int64 secret,
											TupleDesc *desc_out);
/* The columns of durable.activities in ACTIVITY_COLUMNS (engine/activities.c) */
#define DIRECT_ACTIVITY_NCOLUMNS 25
extern bool DirectInsertActivity(const Datum *values, const bool *isnull,
								 bool set_order, int16 priority,
								 const char *concurrency_key);
extern HeapTuple DirectFetchActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
									 TupleDesc *desc_out);
extern HeapTuple DirectReadActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
									TupleDesc *desc_out);
extern void DirectUpdateActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
								 int n, const char *const *names,
								 const Datum *values, const bool *isnull);
extern bool DirectDeleteActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
								 bool only_started, int32 attempt,
								 HeapTuple *tuple_out, TupleDesc *desc_out);
extern bool DirectDeleteTimer(pg_uuid_t *run_id, const char *kind,
							  int64 ref_id);
/* The columns of durable.activity_attempt_log */
#define DIRECT_ATTEMPT_LOG_NCOLUMNS 13
extern void DirectLogActivityAttempt(const Datum *values, const bool *isnull);
extern int	DirectDeleteRunTimers(pg_uuid_t *run_id, const char *except_kind);
extern void DirectSetTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id,
						   TimestampTz due_at, bool set_attempt, int32 attempt,
						   bool keep_earlier);
extern void RequireWritableTransaction(const char *funcname);
extern bool DirectTablesKeep(void);
extern void DirectTablesKeepEnd(void);
extern void DirectTablesRelease(void);
extern bool TaskQueuePaused(const char *namespace, const char *task_queue,
							Snapshot snapshot);
extern bool TaskQueuePausesStored(void);
extern int	DirectScanTextKey(const char *relname, int nkeys,
							  const char *const *keys, Snapshot snapshot,
							  bool (*each) (struct TupleTableSlot *slot,
											Snapshot snapshot, void *arg),
							  void *arg);
extern int	DirectScanTextIndex(const char *relname, const char *indexname,
								int nkeys, const char *const *keys,
								Snapshot snapshot,
								bool (*each) (struct TupleTableSlot *slot,
											  Snapshot snapshot, void *arg),
								void *arg);
extern bool DirectInsertRun(int n, const char *const *names,
							const Datum *values, const bool *isnull,
							const char *arbiter, bool none_seen);
extern void DirectUpdateRun(pg_uuid_t *run_id, int n,
							const char *const *names, const Datum *values,
							const bool *isnull);

/* A run's history read in event order (direct.c) */
typedef struct HistoryScan
{
	Relation	rel;
	struct SysScanDescData *scan;
	int			att[5];
} HistoryScan;

/* One event, copied out of its buffer page (palloc'd in the caller's context) */
typedef struct HistoryEvent
{
	int64		event_id;
	TimestampTz event_time;
	char	   *event_type;
	Jsonb	   *attributes;		/* NULL for SQL NULL */
} HistoryEvent;

extern void BeginHistoryScan(HistoryScan *hs, pg_uuid_t *run_id);
extern void BeginHistoryScanAfter(HistoryScan *hs, pg_uuid_t *run_id,
								  int64 after);
extern bool HistoryScanNext(HistoryScan *hs, HistoryEvent *ev);
extern void EndHistoryScan(HistoryScan *hs);

extern Relation DurableOpenTable(const char *relname, LOCKMODE lockmode);

#endif							/* DURABLE_STORE_DIRECT_H */
