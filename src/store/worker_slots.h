/*-------------------------------------------------------------------------
 *
 * worker_slots.h
 *	  The background workers' slots in shared memory, and their wake-ups (worker_slots.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_WORKER_SLOTS_H
#define DURABLE_STORE_WORKER_SLOTS_H

#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/spin.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

/* durable.max_databases, durable.executor_workers, durable.executor_grace */
extern int	durable_max_databases;
extern int	durable_executor_workers;
extern int	durable_executor_grace;

/* Most executor workers per database (the maximum of durable.executor_workers) */
#define DURABLE_MAX_EXECUTORS	64

/*
 * The task an executor runs, kept in its slot of shared memory (worker_slots.c)
 * for the watchdog of the timer worker and, after the executor's exit, for
 * whoever puts the task off (executor.c, RecoverExecutorTasks).
 */
typedef enum ExecutorTaskStage
{
	TASK_STAGE_RUNNING,			/* nothing done to it yet */
	TASK_STAGE_CANCELED,		/* past its limit: canceled (SIGINT) */
	TASK_STAGE_TERMINATED		/* still running: terminated (SIGTERM) */
} ExecutorTaskStage;

typedef struct ExecutorTask
{
	bool		active;			/* a chain's transaction is under way */
	pid_t		pid;			/* the executor that runs it */
	pg_uuid_t	run_id;			/* the first task of the chain: */
	int64		task_id;
	char		kind;
	int64		scheduled_id;
	int32		attempt;
	TimestampTz started;		/* DurableNow() when it was claimed */
	int			position;		/* of the task running in the chain */
	double		timeout;		/* the time limit of the user code running */
	TimestampTz deadline;		/* when that limit passes; 0: none runs */
	TimestampTz act_at;			/* when the watchdog acts next */
	ExecutorTaskStage stage;
	bool		run_locked;		/* its transaction holds the run's lock */
} ExecutorTask;

/* Runs remembered to be run without chains, per database */
#define EXECUTOR_ALONE_RUNS		8

/* One executor worker of a database */
typedef struct ExecutorSlot
{
	pid_t		pid;			/* 0 while not running */
	Latch	   *latch;
	ExecutorTask task;			/* what it runs; kept after its exit */
} ExecutorSlot;

/* A database's timer and executor workers, as the launcher and backends see them */
typedef struct WorkerSlot
{
	Oid			dboid;			/* InvalidOid: free */
	pid_t		pid;			/* 0 while not running */
	Latch	   *latch;
	pg_atomic_uint64 next_wakeup;	/* 0: awake; else the time it sleeps to */
	pg_atomic_uint64 committed_due; /* least due time committed meanwhile */
	bool		no_extension;	/* exited: durable is not installed */
	uint32		extension_commits;	/* commits of CREATE EXTENSION durable */
	TimestampTz checked_at;		/* when it found that */
	TimestampTz paused_until;	/* DROP/CREATE DATABASE: do not restart */
	bool		installed;		/* the timer worker found the extension */
	bool		executors_idle; /* an executor found the extension at 0.1.0 */
	TimestampTz executors_checked_at;	/* when it found that */
	pg_atomic_uint64 executor_generation;	/* bumped by each wakeup */
	ExecutorSlot executors[DURABLE_MAX_EXECUTORS];
	/* Runs whose tasks run one a transaction, unchained (ExecutorRunAlone) */
	pg_uuid_t	alone_runs[EXECUTOR_ALONE_RUNS];
	int			alone_next;
} WorkerSlot;

typedef struct LauncherShared
{
	slock_t		mutex;
	Latch	   *launcher_latch;
	bool		recheck_all;	/* CREATE EXTENSION found no free slot */
	WorkerSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} LauncherShared;

/* The slot table, one slot per database with workers (bgw/launcher.c) */
extern LauncherShared *WorkerSlotTable;

extern Size WorkerSlotsShmemSize(void);
extern void WorkerSlotsShmemInit(void);
extern int	WorkerSlotFind(Oid dboid);
extern void WorkerSlotInit(int i, Oid dboid);
extern void WakeLauncher(void);
extern void WakeLauncherAtCommit(void);

/* The timer worker's */
extern void WakeTimerWorkerAtCommit(TimestampTz due_at);
extern void TimerWorkerAttach(void);
extern uint32 TimerWorkerExtensionCommits(void);
extern void TimerWorkerDetach(bool no_extension, uint32 commits_seen);
extern void TimerWorkerDetachCallback(int code, Datum arg);
extern TimestampTz TimerWorkerSleepsUntil(TimestampTz sleeps_to);
extern void TimerWorkerFoundExtension(void);

/* The executors' */
extern void ExecutorWorkerAttach(int index);
extern bool ExecutorWorkerDetach(bool no_extension, bool idle);
extern bool ExecutorWorkerWanted(int index);
extern uint64 ExecutorWakeGeneration(void);
extern void WakeExecutors(Oid dboid);
extern void WakeExecutorsAtCommit(void);
extern int	durable_executor_grace;
extern void ExecutorTaskBegin(const ExecutorTask *task);
extern void ExecutorTaskSetPosition(int position);
extern void ExecutorTaskSetDeadline(double timeout, TimestampTz deadline);
extern void ExecutorTaskRunLocked(void);
extern bool ExecutorHoldsRun(const pg_uuid_t *run_id);
extern void ExecutorTaskEnd(void);
extern bool ExecutorTaskInHand(void);
extern bool ExecutorTaskTakeLeftover(int index, ExecutorTask *out);
extern TimestampTz ExecutorWatchdog(void);
extern bool ExecutorRunAlone(const pg_uuid_t *run_id, bool mark);

#endif							/* DURABLE_STORE_WORKER_SLOTS_H */
