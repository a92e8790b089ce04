/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Shared memory: wait buckets for long polls, woken at commit.
 *
 * A poller waits on the condition variable of its queue's bucket (a hash of
 * database, namespace, task queue and kind).  A backend that enqueues a task
 * remembers the bucket and broadcasts it from a commit callback, after the
 * task is visible, so a waiting poll returns within the time of one claim
 * query of the commit.  Each bucket also has a generation counter: a poller
 * reads it before its claim query and sleeps only if no broadcast happened
 * since, so that no wakeup is lost between the query and the sleep.
 *
 * Executor tasks (kinds 'w' and 'x') have no poller: their commit wakes the
 * executor workers of the database instead (launcher.c), which sleep in
 * WaitForExecutorTask with the same generation counter rule.
 *
 * Without shared_preload_libraries there is no shared memory; polls then
 * re-check every 100 ms until their wait ends.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"

#include "durable.h"

#define WAIT_BUCKETS			256
#define UNSHARED_POLL_MS		100

typedef struct WaitBucket
{
	ConditionVariable cv;
	pg_atomic_uint32 waiters;
	pg_atomic_uint64 generation;
} WaitBucket;

static WaitBucket *wait_buckets = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Buckets this transaction enqueued tasks for, woken at commit */
static bool pending_wake[WAIT_BUCKETS];
static bool any_pending_wake = false;
static bool xact_callback_registered = false;

static void
durable_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(WaitBucket) * WAIT_BUCKETS));
	RequestAddinShmemSpace(LauncherShmemSize());
	RequestAddinShmemSpace(ClaimMarkShmemSize());
}

static void
durable_shmem_startup(void)
{
	bool		found;
	int			i;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wait_buckets = ShmemInitStruct("durable wait buckets",
								   sizeof(WaitBucket) * WAIT_BUCKETS, &found);
	if (!found)
	{
		for (i = 0; i < WAIT_BUCKETS; i++)
		{
			ConditionVariableInit(&wait_buckets[i].cv);
			pg_atomic_init_u32(&wait_buckets[i].waiters, 0);
			pg_atomic_init_u64(&wait_buckets[i].generation, 0);
		}
	}
	LauncherShmemInit();
	ClaimMarkShmemInit();
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init when preloaded: ask for and set up shared memory. */
void
DurableShmemInit(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = durable_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = durable_shmem_startup;
}

/* The bucket of a queue in this database. */
static int
queue_bucket(const char *namespace, const char *task_queue, char kind)
{
	uint32		h;

	h = hash_bytes((const unsigned char *) namespace, strlen(namespace));
	h = hash_combine(h, hash_bytes((const unsigned char *) task_queue,
								   strlen(task_queue)));
	h = hash_combine(h, (uint32) kind);
	h = hash_combine(h, (uint32) MyDatabaseId);
	return (int) (h % WAIT_BUCKETS);
}

/* Broadcast the buckets this transaction enqueued for, once it committed. */
static void
durable_xact_callback(XactEvent event, void *arg)
{
	int			i;

	if (!any_pending_wake)
		return;
	if (event == XACT_EVENT_COMMIT && wait_buckets != NULL)
	{
		for (i = 0; i < WAIT_BUCKETS; i++)
		{
			if (!pending_wake[i])
				continue;
			pg_atomic_fetch_add_u64(&wait_buckets[i].generation, 1);
			if (pg_atomic_read_u32(&wait_buckets[i].waiters) > 0)
				ConditionVariableBroadcast(&wait_buckets[i].cv);
		}
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
	{
		memset(pending_wake, 0, sizeof(pending_wake));
		any_pending_wake = false;
	}
}

/*
 * Remember to wake the pollers of a queue, or for an executor task the
 * executors of this database, when this transaction commits.
 */
void
WakeQueueAtCommit(const char *namespace, const char *task_queue, char kind)
{
	if (wait_buckets == NULL)
		return;
	if (kind == 'w' || kind == 'x')
	{
		WakeExecutorsAtCommit();
		return;
	}
	if (!xact_callback_registered)
	{
		RegisterXactCallback(durable_xact_callback, NULL);
		xact_callback_registered = true;
	}
	pending_wake[queue_bucket(namespace, task_queue, kind)] = true;
	any_pending_wake = true;
}

/*
 * Wait for a task on a queue: call claim until it returns non-NULL or
 * wait_ms pass.  Sleeps on the queue's condition variable between tries.
 */
void *
WaitForTask(const char *namespace, const char *task_queue, char kind,
			double wait_ms, void *(*claim) (void *), void *arg)
{
	TimestampTz deadline = TimestampPlusSeconds(GetCurrentTimestamp(),
												wait_ms / 1000.0);
	WaitBucket *bucket = NULL;
	void	   *volatile result = NULL;

	if (wait_buckets != NULL)
	{
		bucket = &wait_buckets[queue_bucket(namespace, task_queue, kind)];
		pg_atomic_fetch_add_u32(&bucket->waiters, 1);
	}

	PG_TRY();
	{
		for (;;)
		{
			uint64		generation = 0;
			long		remaining;

			if (bucket != NULL)
				generation = pg_atomic_read_u64(&bucket->generation);
			result = claim(arg);
			if (result != NULL)
				break;
			remaining = (long) ((deadline - GetCurrentTimestamp()) / 1000);
			if (remaining <= 0)
				break;
			if (bucket != NULL)
			{
				ConditionVariablePrepareToSleep(&bucket->cv);
				if (pg_atomic_read_u64(&bucket->generation) == generation)
					(void) ConditionVariableTimedSleep(&bucket->cv, remaining,
													   PG_WAIT_EXTENSION);
				ConditionVariableCancelSleep();
			}
			else
			{
				(void) WaitLatch(MyLatch,
								 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 Min(remaining, UNSHARED_POLL_MS),
								 PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
			}
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		if (bucket != NULL)
			pg_atomic_fetch_sub_u32(&bucket->waiters, 1);
	}
	PG_END_TRY();
	return result;
}

/*
 * Sleep (an executor worker, outside any transaction) until an executor
 * task may be ready, at most timeout_ms; return early when the latch is set
 * (a wakeup, SIGHUP, SIGTERM).  A commit that queued a task since the last
 * return bumped the database's generation: then return at once, since the
 * caller's last claim may have run before that commit and the latch may
 * have been consumed by a wait inside the task code.
 */
void
WaitForExecutorTask(long timeout_ms)
{
	static bool seen_valid = false;
	static uint64 seen_generation = 0;
	uint64		generation = ExecutorWakeGeneration();

	if (!seen_valid || generation != seen_generation)
	{
		seen_generation = generation;
		seen_valid = true;
		return;
	}
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	/* Read after the reset: a commit after this read sets the latch again. */
	seen_generation = ExecutorWakeGeneration();
}
