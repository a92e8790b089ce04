/*-------------------------------------------------------------------------
 *
 * durable.c
 *	  Loading the library: _PG_init, and the shared memory of every module.
 *
 * The source is in layers, each a folder of src/ that uses only itself and
 * the folders below it (src/README.md; scripts/check-layers checks it):
 * base, store, engine, sqlwf, api, bgw.  This file and guc.c are above them
 * all: they wire the modules together when the library is loaded.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "durable.h"
#include "base/caller.h"
#include "base/util.h"
#include "store/claim_mark.h"
#include "store/claim_order.h"
#include "store/due_mark.h"
#include "store/executor_share.h"
#include "store/metrics.h"
#include "store/pollers.h"
#include "store/queue_controls.h"
#include "store/task_limits.h"
#include "store/wait.h"
#include "store/worker_slots.h"
#include "engine/workflow.h"
#include "bgw/launcher.h"
#include "guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Ask for the shared memory of every module. */
static void
durable_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(WaitShmemSize());
	RequestAddinShmemSpace(WorkerSlotsShmemSize());
	PollersShmemRequest();
	MetricsShmemRequest();
	RequestAddinShmemSpace(ClaimMarkShmemSize());
	RequestAddinShmemSpace(DueMarkShmemSize());
	ExecutorShareShmemRequest();
	RequestAddinShmemSpace(TaskLimitsShmemSize());
	RequestAddinShmemSpace(ClaimOrderShmemSize());
	RequestAddinShmemSpace(QueueControlsShmemSize());
}

/* Set up the shared memory of every module. */
static void
durable_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	WaitShmemInit();
	WorkerSlotsShmemInit();
	PollersShmemInit();
	MetricsShmemInit();
	ClaimMarkShmemInit();
	DueMarkShmemInit();
	ExecutorShareShmemInit();
	TaskLimitsShmemInit();
	ClaimOrderShmemInit();
	QueueControlsShmemInit();
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	durable_library_preloaded = process_shared_preload_libraries_in_progress;

	DurableDefineGucs(durable_library_preloaded);
	InstallCallerHook();
	WorkflowLifecycleInit();

	if (durable_library_preloaded)
	{
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = durable_shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = durable_shmem_startup;
		RegisterLauncher();
		InstallLauncherHooks();
		ClaimMarkInstallHooks();
		MetricsInstallHooks();
	}
}
