/*-------------------------------------------------------------------------
 *
 * claim_order.c
 *	  Where the round robin of a queue's concurrency keys stands.
 *
 * A claim takes the lowest priority first, and within a priority goes round
 * the concurrency keys that have tasks (direct.c, DirectClaimReadyTask): the
 * key after the one served last, oldest task first within a key, back to
 * the first key after the last.  A key with a weight w keeps its turn for w
 * tasks in a row.  So a key with 100,000 tasks waiting takes one turn in
 * each round, as a key with 10 does, and no key waits behind another's
 * backlog.
 *
 * What this file keeps, in shared memory, is each (queue, kind, priority)'s
 * cursor: the key served last and how many tasks in a row it has had.  It
 * is a hint, not a record: a claim that rolls back leaves it moved, a
 * server restart or a slot taken over by another queue starts the round at
 * the first key again, and two claimers reading it at once may serve the
 * same key once more.  None of that loses or repeats a task (the claim's
 * row lock decides that); it only shifts whose turn is next by one.
 *
 * The key is kept whole (concurrency keys are at most CLAIM_KEY_MAX - 1
 * bytes, checked where they are given), so the next key is found by one
 * descent of the ready tasks' primary key at "key > cursor".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "store/claim_order.h"

#define CURSOR_SLOTS	1024
#define CURSOR_PROBE	8

typedef struct CursorSlot
{
	uint64		hash;			/* 0: free */
	uint64		used;			/* the table's clock at its last use */
	int32		served;
	char		key[CLAIM_KEY_MAX];
} CursorSlot;

typedef struct CursorTable
{
	slock_t		mutex;
	uint64		clock;
	CursorSlot	slots[CURSOR_SLOTS];
} CursorTable;

static CursorTable *cursors = NULL;

Size
ClaimOrderShmemSize(void)
{
	return sizeof(CursorTable);
}

void
ClaimOrderShmemInit(void)
{
	bool		found;

	cursors = ShmemInitStruct("durable claim order", sizeof(CursorTable),
							  &found);
	if (!found)
	{
		SpinLockInit(&cursors->mutex);
		cursors->clock = 0;
		memset(cursors->slots, 0, sizeof(cursors->slots));
	}
}

/* The hash of a (database, namespace, queue, kind, priority). */
static uint64
cursor_hash(const char *namespace, const char *task_queue, char kind,
			int priority)
{
	uint64		h = hash_bytes_uint32_extended((uint32) MyDatabaseId, 7);

	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) namespace,
											  strlen(namespace), 1));
	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) task_queue,
											  strlen(task_queue), 2));
	h = hash_combine64(h, (uint64) (unsigned char) kind);
	h = hash_combine64(h, (uint64) priority);
	return h == 0 ? 1 : h;
}

/* The slot of a hash (mutex held), or NULL; with take, one taken for it. */
static CursorSlot *
cursor_slot(uint64 hash, bool take)
{
	CursorSlot *oldest = NULL;
	int			i;

	/* Its own slot; else a free one; else the one used least recently. */
	for (i = 0; i < CURSOR_PROBE; i++)
	{
		CursorSlot *slot = &cursors->slots[(hash + i) % CURSOR_SLOTS];

		if (slot->hash == hash)
			return slot;
		if (oldest == NULL ||
			(oldest->hash != 0 &&
			 (slot->hash == 0 || slot->used < oldest->used)))
			oldest = slot;
	}
	if (!take)
		return NULL;
	oldest->hash = hash;
	oldest->served = 0;
	oldest->key[0] = '\0';
	return oldest;
}

/*
 * The cursor of a queue, kind and priority: false when there is none (no
 * shared memory, or no claim of it since the server started); else the key
 * served last (copied into key, CLAIM_KEY_MAX bytes) and its tasks in a row.
 */
bool
ClaimOrderGet(const char *namespace, const char *task_queue, char kind,
			  int priority, char *key, int32 *served)
{
	uint64		hash;
	CursorSlot *slot;
	bool		found = false;

	if (cursors == NULL)
		return false;
	hash = cursor_hash(namespace, task_queue, kind, priority);
	SpinLockAcquire(&cursors->mutex);
	slot = cursor_slot(hash, false);
	if (slot != NULL)
	{
		memcpy(key, slot->key, CLAIM_KEY_MAX);
		*served = slot->served;
		slot->used = ++cursors->clock;
		found = true;
	}
	SpinLockRelease(&cursors->mutex);
	return found;
}

/*
 * A claim served a task of key: the cursor stands at it, with served tasks
 * in a row.
 */
void
ClaimOrderServed(const char *namespace, const char *task_queue, char kind,
				 int priority, const char *key, int32 served)
{
	uint64		hash;
	CursorSlot *slot;

	if (cursors == NULL)
		return;
	hash = cursor_hash(namespace, task_queue, kind, priority);
	SpinLockAcquire(&cursors->mutex);
	slot = cursor_slot(hash, true);
	strlcpy(slot->key, key, CLAIM_KEY_MAX);
	slot->served = served;
	slot->used = ++cursors->clock;
	SpinLockRelease(&cursors->mutex);
}

/* The priority has no task left for this claim: its round starts again. */
void
ClaimOrderForget(const char *namespace, const char *task_queue, char kind,
				 int priority)
{
	uint64		hash;
	CursorSlot *slot;

	if (cursors == NULL)
		return;
	hash = cursor_hash(namespace, task_queue, kind, priority);
	SpinLockAcquire(&cursors->mutex);
	slot = cursor_slot(hash, false);
	if (slot != NULL)
		slot->hash = 0;
	SpinLockRelease(&cursors->mutex);
}
