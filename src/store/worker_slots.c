/*-------------------------------------------------------------------------
 *
 * worker_slots.c
 *	  The background workers' slots in shared memory, and the wake-ups that
 *	  backends send them at commit.
 *
 * Each database being served has a slot in shared memory with its workers'
 * pids and latches and the time the timer worker sleeps until; a backend that
 * commits a timer due before that time sets the latch
 * (WakeTimerWorkerAtCommit).  The slot table outlives the launcher
 * (bgw/launcher.c), which starts the workers: a launcher that was restarted
 * counts a worker whose pid is in its slot as running, though it has no
 * handle of it, and a worker that finds its slot taken by another process
 * leaves at once, so that a slot never has two timer workers or two
 * executors of one index.  Workers wake the launcher when they leave.
 *
 * A commit that queues an executor task bumps the database's executor
 * generation and sets the executors' latches (WakeExecutors); an executor
 * sleeps only while the generation is the one it last saw (store/wait.c),
 * so that no wakeup is lost between its last claim and its sleep.  Each
 * executor shows the task it runs in its slot (ExecutorTaskBegin), which
 * outlives the executor, for the timer worker's watchdog (ExecutorWatchdog)
 * and for the recovery of a task whose executor died.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "utils/lsyscache.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "base/util.h"
#include "store/worker_slots.h"

/* durable.max_databases, durable.executor_workers, durable.executor_grace */
int			durable_max_databases = 64;
int			durable_executor_workers = 2;
int			durable_executor_grace = 5;

/* The slot table (bgw/launcher.c reads it too) */
LauncherShared *WorkerSlotTable = NULL;

/* Earliest timer this transaction made, and whether to wake the launcher */
static TimestampTz earliest_new_timer = DT_NOEND;
static bool wake_launcher_at_commit = false;
static bool wake_executors_at_commit = false;
static bool xact_callback_registered = false;

/* This executor's slot and index (executors only) */
static int	my_executor_slot = -1;
static int	my_executor_index = -1;

Size
WorkerSlotsShmemSize(void)
{
	return MAXALIGN(add_size(offsetof(LauncherShared, slots),
							 mul_size(sizeof(WorkerSlot), durable_max_databases)));
}

void
WorkerSlotsShmemInit(void)
{
	bool		found;
	int			i;

	WorkerSlotTable = ShmemInitStruct("durable launcher", WorkerSlotsShmemSize(), &found);
	if (!found)
	{
		SpinLockInit(&WorkerSlotTable->mutex);
		WorkerSlotTable->launcher_latch = NULL;
		for (i = 0; i < durable_max_databases; i++)
		{
			memset(&WorkerSlotTable->slots[i], 0, sizeof(WorkerSlot));
			pg_atomic_init_u64(&WorkerSlotTable->slots[i].next_wakeup, 0);
			pg_atomic_init_u64(&WorkerSlotTable->slots[i].committed_due, (uint64) DT_NOEND);
			pg_atomic_init_u64(&WorkerSlotTable->slots[i].executor_generation, 0);
		}
	}
}

/* The slot of a database, or -1 (caller holds the mutex). */
int
WorkerSlotFind(Oid dboid)
{
	int			i;

	for (i = 0; i < durable_max_databases; i++)
		if (WorkerSlotTable->slots[i].dboid == dboid)
			return i;
	return -1;
}

/* Give free slot i to a database (caller holds the mutex). */
void
WorkerSlotInit(int i, Oid dboid)
{
	memset(&WorkerSlotTable->slots[i], 0, sizeof(WorkerSlot));
	WorkerSlotTable->slots[i].dboid = dboid;
	pg_atomic_init_u64(&WorkerSlotTable->slots[i].next_wakeup, 0);
	pg_atomic_init_u64(&WorkerSlotTable->slots[i].committed_due, (uint64) DT_NOEND);
	pg_atomic_init_u64(&WorkerSlotTable->slots[i].executor_generation, 0);
}

/* Set the launcher's latch now, so that it looks at the slots again. */
void
WakeLauncher(void)
{
	Latch	   *latch;

	if (WorkerSlotTable == NULL)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	latch = WorkerSlotTable->launcher_latch;
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (latch != NULL)
		SetLatch(latch);
}

/*
 * Make the timer worker of slot i wake by due: record the due time for the
 * worker first, since an awake worker reads it before it sleeps
 * (TimerWorkerSleepsUntil) and is not woken, which would send a worker whose
 * round is slow (walking dead index entries under a held vacuum horizon)
 * round again and again for timers due long after.  A sleeping one is woken
 * when due is before it would wake.
 */
static void
wake_timer_worker_by(int i, TimestampTz due)
{
	WorkerSlot *slot = &WorkerSlotTable->slots[i];
	uint64		sleeps_to;
	uint64		least;

	least = pg_atomic_read_u64(&slot->committed_due);
	while ((int64) least > due &&
		   !pg_atomic_compare_exchange_u64(&slot->committed_due,
										   &least, (uint64) due))
		;
	pg_memory_barrier();
	sleeps_to = pg_atomic_read_u64(&slot->next_wakeup);
	if (sleeps_to != 0 && due < (int64) sleeps_to)
	{
		SpinLockAcquire(&WorkerSlotTable->mutex);
		if (slot->latch != NULL && slot->dboid == MyDatabaseId)
			SetLatch(slot->latch);
		SpinLockRelease(&WorkerSlotTable->mutex);
	}
}

/*
 * Wake the timer worker of this database, its executors, or the launcher,
 * at commit.
 */
static void
launcher_xact_callback(XactEvent event, void *arg)
{
	TimestampTz due = earliest_new_timer;
	bool		wake_launcher = wake_launcher_at_commit;
	bool		wake_executors = wake_executors_at_commit;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	earliest_new_timer = DT_NOEND;
	wake_launcher_at_commit = false;
	wake_executors_at_commit = false;
	if (event != XACT_EVENT_COMMIT || WorkerSlotTable == NULL)
		return;

	if (wake_executors)
		WakeExecutors(MyDatabaseId);

	if (due != DT_NOEND)
	{
		int			i;

		for (i = 0; i < durable_max_databases; i++)
			if (WorkerSlotTable->slots[i].dboid == MyDatabaseId)
			{
				wake_timer_worker_by(i, due);
				break;
			}
	}
	if (wake_launcher)
	{
		int			i;

		SpinLockAcquire(&WorkerSlotTable->mutex);
		/*
		 * Counted once the commit is visible: a timer worker whose snapshot
		 * was taken before it, and which found no extension, sees the count
		 * change and does not tell the launcher so (TimerWorkerDetach).
		 */
		i = WorkerSlotFind(MyDatabaseId);
		if (i >= 0)
			WorkerSlotTable->slots[i].extension_commits++;
		if (WorkerSlotTable->launcher_latch != NULL)
			SetLatch(WorkerSlotTable->launcher_latch);
		SpinLockRelease(&WorkerSlotTable->mutex);
	}
}

static void
register_callback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(launcher_xact_callback, NULL);
		xact_callback_registered = true;
	}
}

/* Wake the launcher at commit, so that it looks at the databases again. */
void
WakeLauncherAtCommit(void)
{
	register_callback();
	wake_launcher_at_commit = true;
}

/* A timer due at due_at was made: wake the worker at commit if it is earlier. */
void
WakeTimerWorkerAtCommit(TimestampTz due_at)
{
	if (WorkerSlotTable == NULL)
		return;
	register_callback();
	if (due_at < earliest_new_timer)
		earliest_new_timer = due_at;
}

/* An executor task was queued: wake this database's executors at commit. */
void
WakeExecutorsAtCommit(void)
{
	if (WorkerSlotTable == NULL)
		return;
	register_callback();
	wake_executors_at_commit = true;
}

/*
 * Wake the executors of a database: bump its generation, then set their
 * latches.  The latches are read under the mutex and set after it: one of
 * an executor that just left only wakes some other process for nothing.
 */
void
WakeExecutors(Oid dboid)
{
	Latch	   *latches[DURABLE_MAX_EXECUTORS];
	int			n = 0;
	int			i;
	int			k;

	if (WorkerSlotTable == NULL)
		return;
	for (i = 0; i < durable_max_databases; i++)
		if (WorkerSlotTable->slots[i].dboid == dboid)
			break;
	if (i >= durable_max_databases)
		return;
	pg_atomic_fetch_add_u64(&WorkerSlotTable->slots[i].executor_generation, 1);
	SpinLockAcquire(&WorkerSlotTable->mutex);
	for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
		if (WorkerSlotTable->slots[i].executors[k].latch != NULL)
			latches[n++] = WorkerSlotTable->slots[i].executors[k].latch;
	SpinLockRelease(&WorkerSlotTable->mutex);
	for (k = 0; k < n; k++)
		SetLatch(latches[k]);
}

/* The wakeup generation of this executor's database (executors only). */
uint64
ExecutorWakeGeneration(void)
{
	Assert(my_executor_slot >= 0);
	return pg_atomic_read_u64(&WorkerSlotTable->slots[my_executor_slot].executor_generation);
}

/*
 * Executor index of MyDatabaseId registers its latch.  It leaves at once
 * when its database has no slot (it was freed meanwhile) or when another
 * process holds the index: one started by a launcher that was restarted
 * before its executor attached, so the new launcher started another.
 */
void
ExecutorWorkerAttach(int index)
{
	int			i = -1;
	pid_t		other = 0;

	if (index >= 0 && index < DURABLE_MAX_EXECUTORS)
	{
		SpinLockAcquire(&WorkerSlotTable->mutex);
		i = WorkerSlotFind(MyDatabaseId);
		if (i >= 0)
		{
			ExecutorSlot *e = &WorkerSlotTable->slots[i].executors[index];

			other = e->pid;
			if (other == 0)
			{
				e->pid = MyProcPid;
				e->latch = MyLatch;
			}
		}
		SpinLockRelease(&WorkerSlotTable->mutex);
	}
	if (i < 0)
	{
		ereport(LOG,
				(errmsg("durable executor %d for database %u exits: the database has no worker slot",
						index + 1, MyDatabaseId)));
		proc_exit(0);
	}
	if (other != 0)
	{
		ereport(LOG,
				(errmsg("durable executor %d for database %u exits: process %d runs it already",
						index + 1, MyDatabaseId, (int) other)));
		proc_exit(0);
	}
	my_executor_slot = i;
	my_executor_index = index;
}

/*
 * The executor leaves.  no_extension: durable is not installed (no executor
 * is started until the timer worker finds it again); idle: it is at 0.1.0.
 * Returns whether this made the database's executors idle.
 */
bool
ExecutorWorkerDetach(bool no_extension, bool idle)
{
	WorkerSlot *slot;
	bool		made_idle = false;
	Latch	   *timer_latch = NULL;

	if (my_executor_slot < 0)
		return false;
	slot = &WorkerSlotTable->slots[my_executor_slot];
	SpinLockAcquire(&WorkerSlotTable->mutex);
	if (slot->executors[my_executor_index].pid == MyProcPid)
	{
		slot->executors[my_executor_index].pid = 0;
		slot->executors[my_executor_index].latch = NULL;
		/* A task left in hand: the timer worker puts it off */
		if (slot->executors[my_executor_index].task.active)
			timer_latch = slot->latch;
	}
	if (no_extension)
		slot->installed = false;
	if (idle)
	{
		made_idle = !slot->executors_idle;
		slot->executors_idle = true;
		slot->executors_checked_at = GetCurrentTimestamp();
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	my_executor_slot = -1;
	if (timer_latch != NULL)
		SetLatch(timer_latch);
	/* A launcher restarted since this executor started has no handle of it. */
	WakeLauncher();
	return made_idle;
}

/*
 * Whether executor index should run, after a reload (executors only).  Not
 * durable.worker_enabled: in a worker it is the database's value (ALTER
 * DATABASE), which makes the executors idle (DatabaseWorkersEnabled); the
 * server's value is the launcher's, which stops every worker when it is off.
 */
bool
ExecutorWorkerWanted(int index)
{
	return index < durable_executor_workers;
}

/* This executor's task record (executors only), or NULL. */
static ExecutorTask *
my_task(void)
{
	if (WorkerSlotTable == NULL || my_executor_slot < 0)
		return NULL;
	return &WorkerSlotTable->slots[my_executor_slot].executors[my_executor_index].task;
}

/*
 * The executor claimed the first task of a chain: publish it, so that the
 * watchdog can see it run and, if the executor exits in its middle, the
 * task can be put off (RecoverExecutorTasks).  No-op outside an executor.
 */
void
ExecutorTaskBegin(const ExecutorTask *task)
{
	ExecutorTask *t = my_task();

	if (t == NULL)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	*t = *task;
	t->active = true;
	t->pid = MyProcPid;
	t->position = 0;
	t->deadline = 0;
	t->act_at = 0;
	t->stage = TASK_STAGE_RUNNING;
	t->run_locked = false;
	SpinLockRelease(&WorkerSlotTable->mutex);
}

/* The chain moved on to its task number position. */
void
ExecutorTaskSetPosition(int position)
{
	ExecutorTask *t = my_task();

	if (t == NULL)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	t->position = position;
	SpinLockRelease(&WorkerSlotTable->mutex);
}

/*
 * User code with a time limit of timeout seconds, ending at deadline, starts
 * (deadline 0: it ended).  The timer worker must wake grace after the
 * deadline: the due time goes to it as a timer's would (wake_timer_worker_by),
 * which sets its latch only when it would sleep past it.
 */
void
ExecutorTaskSetDeadline(double timeout, TimestampTz deadline)
{
	ExecutorTask *t = my_task();
	TimestampTz act_at = 0;

	if (t == NULL)
		return;
	if (deadline != 0)
		act_at = TimestampTzPlusMilliseconds(deadline,
											 (int64) durable_executor_grace * 1000);
	SpinLockAcquire(&WorkerSlotTable->mutex);
	t->timeout = timeout;
	t->deadline = deadline;
	t->act_at = act_at;
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (act_at != 0)
		wake_timer_worker_by(my_executor_slot, act_at);
}

/*
 * The chain's transaction locked its run (the row of durable.runs), which it
 * keeps until it ends: other executors that time out waiting for that lock
 * wait again rather than put their task off (ExecutorHoldsRun).
 */
void
ExecutorTaskRunLocked(void)
{
	ExecutorTask *t = my_task();

	if (t == NULL || t->run_locked)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	t->run_locked = true;
	SpinLockRelease(&WorkerSlotTable->mutex);
}

/*
 * Whether another executor of this database, still running, is in a chain
 * of run_id that holds the run's lock.  That lock is held at most for its
 * task (its time limit, then the watchdog), so a lock timeout of this
 * executor on that run need not give the task back.  The answer may be
 * stale by the time it is used (the holder just committed): then the next
 * wait is short.
 */
bool
ExecutorHoldsRun(const pg_uuid_t *run_id)
{
	int			i;
	bool		found = false;

	if (WorkerSlotTable == NULL)
		return false;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = my_executor_slot >= 0 ? my_executor_slot : WorkerSlotFind(MyDatabaseId);
	for (int k = 0; i >= 0 && k < DURABLE_MAX_EXECUTORS && !found; k++)
	{
		ExecutorSlot *e = &WorkerSlotTable->slots[i].executors[k];
		ExecutorTask *t = &e->task;

		found = t->active && t->run_locked && e->pid != 0 &&
			e->pid == t->pid && t->pid != MyProcPid &&
			memcmp(&t->run_id, run_id, sizeof(pg_uuid_t)) == 0;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	return found;
}

/* The chain's transaction ended (committed, or rolled back and handled). */
void
ExecutorTaskEnd(void)
{
	ExecutorTask *t = my_task();

	if (t == NULL)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	t->active = false;
	t->deadline = 0;
	t->run_locked = false;
	SpinLockRelease(&WorkerSlotTable->mutex);
}

/* Whether this executor is in the middle of a chain. */
bool
ExecutorTaskInHand(void)
{
	ExecutorTask *t = my_task();

	return t != NULL && t->active;
}

/*
 * Take a task that an executor of this database left in hand when it
 * exited: index's (the restarted executor), or any executor's (index -1,
 * the timer worker).  The record is cleared under the mutex, so that one
 * process only puts the task off.  False when there is none.
 */
bool
ExecutorTaskTakeLeftover(int index, ExecutorTask *out)
{
	int			i;
	int			k;
	bool		found = false;

	if (WorkerSlotTable == NULL)
		return false;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(MyDatabaseId);
	for (k = 0; i >= 0 && k < DURABLE_MAX_EXECUTORS && !found; k++)
	{
		ExecutorSlot *e = &WorkerSlotTable->slots[i].executors[k];

		if ((index >= 0 && k != index) || !e->task.active ||
			e->pid == e->task.pid)
			continue;
		*out = e->task;
		e->task.active = false;
		found = true;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	return found;
}

/*
 * With mark, remember that the tasks of run_id must run one a transaction:
 * a later task of a chain of its brought an executor down, and alone it is
 * the chain's first task, whose end can be recorded.  Without, whether it
 * is remembered (the last EXECUTOR_ALONE_RUNS runs marked in the database).
 */
bool
ExecutorRunAlone(const pg_uuid_t *run_id, bool mark)
{
	int			i;
	bool		found = false;

	if (WorkerSlotTable == NULL)
		return false;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = my_executor_slot >= 0 ? my_executor_slot : WorkerSlotFind(MyDatabaseId);
	if (i >= 0)
	{
		WorkerSlot *slot = &WorkerSlotTable->slots[i];

		for (int k = 0; k < EXECUTOR_ALONE_RUNS && !found; k++)
			found = memcmp(&slot->alone_runs[k], run_id, sizeof(pg_uuid_t)) == 0;
		if (mark && !found)
		{
			slot->alone_runs[slot->alone_next] = *run_id;
			slot->alone_next = (slot->alone_next + 1) % EXECUTOR_ALONE_RUNS;
		}
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	return found;
}

/*
 * The watchdog, run by the timer worker of MyDatabaseId at each wakeup:
 * user code of an executor still running durable.executor_grace past its
 * time limit is canceled (SIGINT, as pg_cancel_backend), and if it still
 * runs grace after that, its executor is terminated (SIGTERM, as
 * pg_terminate_backend: a FATAL that no PL/pgSQL handler catches), again
 * each grace until it exits.  Returns when it must look again (DT_NOEND:
 * no limit runs).
 */
TimestampTz
ExecutorWatchdog(void)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz next = DT_NOEND;
	int64		grace_ms = (int64) durable_executor_grace * 1000;
	pid_t		pids[DURABLE_MAX_EXECUTORS];
	int			sigs[DURABLE_MAX_EXECUTORS];
	ExecutorTask tasks[DURABLE_MAX_EXECUTORS];
	int			n = 0;
	int			i;
	int			k;

	if (WorkerSlotTable == NULL)
		return DT_NOEND;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(MyDatabaseId);
	for (k = 0; i >= 0 && k < DURABLE_MAX_EXECUTORS; k++)
	{
		ExecutorSlot *e = &WorkerSlotTable->slots[i].executors[k];
		ExecutorTask *t = &e->task;

		if (!t->active || t->deadline == 0 || e->pid == 0 ||
			e->pid != t->pid)
			continue;
		if (now >= t->act_at)
		{
			pids[n] = t->pid;
			sigs[n] = t->stage == TASK_STAGE_RUNNING ? SIGINT : SIGTERM;
			t->stage = t->stage == TASK_STAGE_RUNNING ?
				TASK_STAGE_CANCELED : TASK_STAGE_TERMINATED;
			t->act_at = TimestampTzPlusMilliseconds(now, grace_ms);
			tasks[n++] = *t;
		}
		next = Min(next, t->act_at);
	}
	SpinLockRelease(&WorkerSlotTable->mutex);

	for (k = 0; k < n; k++)
	{
		ExecutorTask *t = &tasks[k];

		ereport(sigs[k] == SIGINT ? LOG : WARNING,
				(errmsg("durable: %s executor process %d: its %s task of run %s ran %d s past its time limit of %g s",
						sigs[k] == SIGINT ? "canceling" : "terminating",
						(int) pids[k],
						t->kind == 'w' ? "decision" : "activity",
						UuidToCString(&t->run_id),
						(int) ((now - t->deadline) / USECS_PER_SEC),
						t->timeout),
				 sigs[k] == SIGINT ?
				 errdetail("It is terminated if it still runs %d s from now.",
						   durable_executor_grace) :
				 errdetail("The function ignored the cancel; its attempt is recorded as timed out and its task is put off.")));
		if (kill(pids[k], sigs[k]) != 0 && errno != ESRCH)
			ereport(WARNING,
					(errmsg("durable: could not signal executor process %d: %m",
							(int) pids[k])));
	}
	return next;
}

/*
 * The timer worker found the extension installed: tell the launcher, which
 * then starts the executors, unless the slot says so already.
 */
void
TimerWorkerFoundExtension(void)
{
	int			i;
	Latch	   *wake = NULL;

	for (i = 0; i < durable_max_databases; i++)
		if (WorkerSlotTable->slots[i].dboid == MyDatabaseId)
			break;
	if (i >= durable_max_databases || WorkerSlotTable->slots[i].installed)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	WorkerSlotTable->slots[i].installed = true;
	wake = WorkerSlotTable->launcher_latch;
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (wake != NULL)
		SetLatch(wake);
}

/*
 * Called by the timer worker before it sleeps until sleeps_to, and with 0
 * when it wakes (before its round's snapshot).  Returns the least due time
 * of the timers committed since its last call (DT_NOEND: none), which it
 * must not sleep past: those committed while it was awake did not set its
 * latch.
 */
TimestampTz
TimerWorkerSleepsUntil(TimestampTz sleeps_to)
{
	int			i;

	for (i = 0; i < durable_max_databases; i++)
		if (WorkerSlotTable->slots[i].dboid == MyDatabaseId)
		{
			pg_atomic_write_u64(&WorkerSlotTable->slots[i].next_wakeup, (uint64) sleeps_to);
			pg_memory_barrier();
			return (TimestampTz)
				pg_atomic_exchange_u64(&WorkerSlotTable->slots[i].committed_due,
									   (uint64) DT_NOEND);
		}
	return DT_NOEND;
}

/*
 * The timer worker of MyDatabaseId registers its latch.  Like an executor
 * (ExecutorWorkerAttach), it leaves at once when its database has no slot
 * or another process is the slot's timer worker already.
 */
void
TimerWorkerAttach(void)
{
	int			i;
	pid_t		other = 0;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(MyDatabaseId);
	if (i >= 0)
	{
		other = WorkerSlotTable->slots[i].pid;
		if (other == 0)
		{
			WorkerSlotTable->slots[i].pid = MyProcPid;
			WorkerSlotTable->slots[i].latch = MyLatch;
			WorkerSlotTable->slots[i].no_extension = false;
			pg_atomic_write_u64(&WorkerSlotTable->slots[i].next_wakeup, 0);
		}
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (i < 0)
	{
		ereport(LOG,
				(errmsg("durable timer worker for database %u exits: the database has no worker slot",
						MyDatabaseId)));
		proc_exit(0);
	}
	if (other != 0)
	{
		ereport(LOG,
				(errmsg("durable timer worker for database %u exits: process %d runs it already",
						MyDatabaseId, (int) other)));
		proc_exit(0);
	}
}

/*
 * The count of commits of CREATE EXTENSION durable (or of anything else that
 * woke the launcher at commit) in this timer worker's database, read before
 * the snapshot that looks for the extension.
 */
uint32
TimerWorkerExtensionCommits(void)
{
	int			i;
	uint32		n = 0;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(MyDatabaseId);
	if (i >= 0)
		n = WorkerSlotTable->slots[i].extension_commits;
	SpinLockRelease(&WorkerSlotTable->mutex);
	return n;
}

/*
 * The timer worker leaves; no_extension says why.  It wakes the launcher.
 * A worker that found no extension with a snapshot taken when the count of
 * commits was commits_seen, while a CREATE EXTENSION has committed since,
 * leaves as a worker that found it: the launcher checks the database again
 * at once instead of after NO_EXTENSION_RECHECK_SECS (launcher.c).
 */
void
TimerWorkerDetach(bool no_extension, uint32 commits_seen)
{
	int			i;
	bool		left = false;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(MyDatabaseId);
	if (i >= 0 && WorkerSlotTable->slots[i].pid == MyProcPid)
	{
		if (no_extension &&
			WorkerSlotTable->slots[i].extension_commits != commits_seen)
			no_extension = false;
		WorkerSlotTable->slots[i].pid = 0;
		WorkerSlotTable->slots[i].latch = NULL;
		WorkerSlotTable->slots[i].no_extension = no_extension;
		WorkerSlotTable->slots[i].checked_at = GetCurrentTimestamp();
		if (no_extension)
			WorkerSlotTable->slots[i].installed = false;
		left = true;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	/* A launcher restarted since this worker started has no handle of it. */
	if (left)
		WakeLauncher();
}

/* before_shmem_exit callback of the timer worker. */
void
TimerWorkerDetachCallback(int code, Datum arg)
{
	TimerWorkerDetach(false, 0);
}
