/*-------------------------------------------------------------------------
 *
 * util.c
 *	  Argument checks and small conversions shared by the API functions.
 *
 * Every check raises the SQLSTATE docs/errors.md gives with a message that
 * names the argument, before the caller has changed anything.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include <math.h>

#include "access/genam.h"
#include "common/hashfn.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/uuid.h"

#include "durable.h"
#include "base/util.h"

/* Whether the library came from shared_preload_libraries (_PG_init) */
bool		durable_library_preloaded = false;

/* durable.max_payload_size: the largest payload accepted (CheckPayload) */
int			durable_max_payload_size = 2 * 1024 * 1024;

/* A required name: not NULL, not empty, not over-long. */
char *
CheckName(text *value, const char *argname)
{
	char	   *s;

	if (value == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", argname)));
	s = text_to_cstring(value);
	if (s[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", argname)));
	if (strlen(s) > DURABLE_MAX_NAME_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", argname),
				 errdetail("It is %zu bytes; the limit is %d.",
						   strlen(s), DURABLE_MAX_NAME_LEN)));
	return s;
}

/* An optional name: NULL stays NULL, otherwise as CheckName. */
char *
CheckOptionalName(text *value, const char *argname)
{
	if (value == NULL)
		return NULL;
	return CheckName(value, argname);
}

/*
 * A concurrency key (docs/task-queues.md "Priorities and fairness"): NULL
 * stays NULL (no key); otherwise not empty and at most DURABLE_MAX_KEY_LEN
 * bytes.
 */
char *
CheckConcurrencyKey(const char *key, const char *argname)
{
	if (key == NULL)
		return NULL;
	if (key[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", argname),
				 errhint("Give NULL for no key.")));
	if (strlen(key) > DURABLE_MAX_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", argname),
				 errdetail("It is %zu bytes; the limit is %d.",
						   strlen(key), DURABLE_MAX_KEY_LEN)));
	return pstrdup(key);
}

/* A task's priority: 1 (first) to 5. */
int
CheckPriority(int64 value, const char *argname)
{
	if (value < 1 || value > 5)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 1 and 5", argname),
				 errdetail("It is " INT64_FORMAT ".", value),
				 errhint("1 is claimed first; the default is 3.")));
	return (int) value;
}

/* A payload must fit durable.max_payload_size. */
void
CheckPayload(Jsonb *value, const char *argname)
{
	if (value != NULL && VARSIZE(value) > durable_max_payload_size)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_LIMIT_EXCEEDED),
				 errmsg("%s is too large", argname),
				 errdetail("It is %u bytes; durable.max_payload_size is %d bytes.",
						   (unsigned int) VARSIZE(value),
						   durable_max_payload_size)));
}

/* A JSON value that must be an object (memo, attributes), or NULL. */
void
CheckObject(Jsonb *value, const char *argname)
{
	if (value != NULL && !JB_ROOT_IS_OBJECT(value))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", argname)));
	CheckPayload(value, argname);
}

/*
 * A number of seconds a user gave (an interval argument or a JSON field):
 * a number, not negative, zero only when allowed, at most
 * DURABLE_MAX_DURATION_SECS.  Bounded here, every deadline the engine later
 * computes from it stays far from the ends of timestamptz.
 */
double
CheckSeconds(double seconds, const char *argname, bool allow_zero)
{
	if (isnan(seconds))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a number of seconds", argname)));
	if (seconds < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", argname)));
	if (seconds == 0 && !allow_zero)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be greater than zero", argname)));
	if (seconds > DURABLE_MAX_DURATION_SECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most " DURABLE_MAX_DURATION_TEXT, argname),
				 errdetail("It is %g seconds; the limit is %.0f seconds.",
						   seconds, DURABLE_MAX_DURATION_SECS)));
	return seconds;
}

/*
 * An interval as seconds (a month counts 30 days, as in PostgreSQL's interval
 * comparisons), checked by CheckSeconds.  Computed in double: no field of an
 * interval, however large, overflows it.  Each field is bounded too, not
 * only their sum: '1000000 months -29999999 days' is one day, but adding it
 * to a timestamp (retention is used so) overflows at its months.
 */
double
IntervalToSeconds(Interval *value, const char *argname, bool allow_zero)
{
	double		months = (double) value->month * DAYS_PER_MONTH * SECS_PER_DAY;
	double		days = (double) value->day * SECS_PER_DAY;
	double		time = (double) value->time / USECS_PER_SEC;
	double		seconds;

	seconds = CheckSeconds(months + days + time, argname, allow_zero);
	if (fabs(months) > DURABLE_MAX_DURATION_SECS ||
		fabs(days) > DURABLE_MAX_DURATION_SECS ||
		fabs(time) > DURABLE_MAX_DURATION_SECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most " DURABLE_MAX_DURATION_TEXT, argname),
				 errdetail("Each of its months, days and time must be at most %.0f seconds.",
						   DURABLE_MAX_DURATION_SECS)));
	return seconds;
}

/*
 * A JSON number as a double, without numeric_float8's out-of-range error:
 * a huge number gives +-infinity and a tiny one 0, which the caller's range
 * check then rejects or accepts with a message naming the field.
 */
double
NumericToDouble(Numeric value)
{
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out,
														NumericGetDatum(value)));
	double		d = strtod(s, NULL);

	pfree(s);
	return d;
}

/*
 * t + seconds, saturating at the ends of the timestamp range; an infinite t
 * stays as it is and a NaN gives "never" (DT_NOEND).  Every deadline is
 * computed here, also from values read back from the tables, so that none
 * (not even one stored by an older version) can raise an overflow.
 */
TimestampTz
TimestampPlusSeconds(TimestampTz t, double seconds)
{
	double		result;

	if (TIMESTAMP_NOT_FINITE(t))
		return t;
	if (isnan(seconds))
		return DT_NOEND;
	result = (double) t + seconds * USECS_PER_SEC;
	if (result >= (double) END_TIMESTAMP)
		return DT_NOEND;
	if (result < (double) MIN_TIMESTAMP)
		return DT_NOBEGIN;
	return (TimestampTz) result;
}

/* later - earlier, in seconds (in double: no overflow for infinite ends). */
double
TimestampDiffSeconds(TimestampTz later, TimestampTz earlier)
{
	return ((double) later - (double) earlier) / USECS_PER_SEC;
}

/*
 * Random bytes from pg_strong_random, drawn RANDOM_POOL_SIZE at a time.  A
 * call of pg_strong_random costs about the same for 8 bytes as for 256 (with
 * OpenSSL, RAND_bytes' checks and locking come with each call): drawn one
 * run id or task secret at a time, they were 1.6 % of an activity cycle's
 * instructions (bench/instructions.sh).  The pool belongs to the process
 * that drew it: a forked child draws its own, and each byte handed out is
 * wiped from the pool.
 */
#define RANDOM_POOL_SIZE	256

static uint8 random_pool[RANDOM_POOL_SIZE];
static int	random_pool_left = 0;
static int	random_pool_pid = 0;

static void
strong_random_bytes(void *buf, int len)
{
	Assert(len > 0 && len <= RANDOM_POOL_SIZE);
	if (random_pool_pid != MyProcPid || random_pool_left < len)
	{
		if (!pg_strong_random(random_pool, RANDOM_POOL_SIZE))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values")));
		random_pool_left = RANDOM_POOL_SIZE;
		random_pool_pid = MyProcPid;
	}
	random_pool_left -= len;
	memcpy(buf, random_pool + random_pool_left, len);
	explicit_bzero(random_pool + random_pool_left, len);
}

/* A version 4 (random) UUID. */
pg_uuid_t *
NewRandomUuid(void)
{
	pg_uuid_t  *uuid = palloc(sizeof(pg_uuid_t));

	strong_random_bytes(uuid->data, UUID_LEN);
	uuid->data[6] = (uuid->data[6] & 0x0f) | 0x40;
	uuid->data[8] = (uuid->data[8] & 0x3f) | 0x80;
	return uuid;
}

/*
 * A version 7 UUID: 48 bits of Unix time in milliseconds, then random bits.
 * Run ids are made this way so that the indexes they lead (runs, history,
 * activities, timers) grow at their right edge instead of at random pages;
 * so are the workflow ids drawn for a start or a child that gives none, for
 * the index of durable.runs they lead (runs_of_workflow_id; two before
 * 0.12.0, runs_by_workflow_id and runs_one_running).  A random one there
 * makes each start write to a leaf page that no recent start wrote: with
 * many open workflows, a page read and, after a checkpoint, a full-page
 * image in WAL a start (docs/performance.md "Many open workflows").
 */
pg_uuid_t *
NewTimeOrderedUuid(void)
{
	pg_uuid_t  *uuid = NewRandomUuid();
	TimestampTz now = GetCurrentTimestamp();
	uint64		ms = (uint64) ((now / 1000) +
							   ((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
								SECS_PER_DAY * 1000));
	int			i;

	for (i = 0; i < 6; i++)
		uuid->data[i] = (uint8) (ms >> (40 - 8 * i));
	uuid->data[6] = (uuid->data[6] & 0x0f) | 0x70;
	return uuid;
}

/*
 * The secret of a task token: 64 random bits drawn when a task is claimed,
 * kept with the task (durable.runs or durable.activities, column
 * task_secret) and checked on every answer (api/worker.c).
 */
int64
NewTaskSecret(void)
{
	uint64		secret;

	strong_random_bytes(&secret, sizeof(secret));
	return (int64) secret;
}

/*
 * Whether the tables have the task_secret columns (0.3.0): a database not
 * yet updated from 0.2.0 gets tokens without a secret, as before.
 */
bool
TaskSecretsStored(void)
{
	return DurableColumnExists("activities", "task_secret");
}

/* Whether relid is durable.<name>.  Syscache lookups only. */
bool
IsDurableTable(Oid relid, const char *name)
{
	char	   *relname;
	char	   *nsp;

	if (!OidIsValid(relid))
		return false;
	relname = get_rel_name(relid);
	if (relname == NULL || strcmp(relname, name) != 0)
		return false;
	nsp = get_namespace_name(get_rel_namespace(relid));
	return nsp != NULL && strcmp(nsp, "durable") == 0;
}

/*
 * A 64-bit hash of a task queue's name in its namespace, which the keys of
 * a queue in shared memory start from.
 */
uint64
QueueNameHash(const char *namespace, const char *task_queue)
{
	uint64		h;

	h = hash_bytes_extended((const unsigned char *) namespace,
							strlen(namespace), 0);
	return hash_combine64(h, hash_bytes_extended((const unsigned char *) task_queue,
												 strlen(task_queue), 0));
}

/*
 * The OID of durable.<relname>, InvalidOid when the schema has no such
 * relation (a version before the one that made it, or no extension).
 * Syscache lookups only.
 */
Oid
DurableRelationOid(const char *relname)
{
	Oid			nsp = get_namespace_oid("durable", true);

	return OidIsValid(nsp) ? get_relname_relid(relname, nsp) : InvalidOid;
}

/*
 * Whether durable.<relname> has a column of that name: how the library tells
 * the version of the schema it runs on (a database is at the version of the
 * last ALTER EXTENSION UPDATE, whatever the library).  Syscache lookups only.
 */
bool
DurableColumnExists(const char *relname, const char *column)
{
	Oid			relid = DurableRelationOid(relname);

	return OidIsValid(relid) &&
		get_attnum(relid, column) != InvalidAttrNumber;
}

/*
 * Hold the durable extension against DROP EXTENSION until the end of the
 * transaction, as a background worker does before it touches durable's
 * tables: a DROP waits for the worker's transaction, and a worker's
 * transaction that begins during a DROP waits for it and then finds the
 * extension gone, instead of failing on a table dropped under it.  False
 * when the extension is not installed, or was dropped while the lock was
 * awaited (granting the lock made the catalog's changes visible).
 */
bool
DurableLockExtension(void)
{
	Oid			extension = get_extension_oid("durable", true);

	if (!OidIsValid(extension))
		return false;
	LockDatabaseObject(ExtensionRelationId, extension, 0, AccessShareLock);
	return get_extension_oid("durable", true) == extension;
}

/*
 * The version of the durable extension installed in this database, as
 * major * 10000 + minor * 100 + patch (0.7.0 is 700), and its owner; -1 when
 * it is not installed.  A scan of pg_extension's name index.
 */
int
DurableExtensionVersion(Oid *owner)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	int			version = -1;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("durable"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);
		int			major = 0,
					minor = 0,
					patch = 0;

		if (!isnull)
			(void) sscanf(TextDatumGetCString(d), "%d.%d.%d", &major, &minor,
						  &patch);
		version = major * 10000 + minor * 100 + patch;
		if (owner != NULL)
			*owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/* The canonical text form of a UUID. */
char *
UuidToCString(const pg_uuid_t *uuid)
{
	return DatumGetCString(DirectFunctionCall1(uuid_out,
											   UUIDPGetDatum((pg_uuid_t *) uuid)));
}

/*
 * Parse a UUID in its canonical 36-character form into *out; false when s
 * is not one.  uuid_in would raise 22P02, which callers that must name the
 * argument (a task token, a decision field) replace with their own error.
 */
bool
ParseCanonicalUuid(const char *s, pg_uuid_t *out)
{
	int			k;

	for (k = 0; s[k] != '\0'; k++)
	{
		bool		dash = (k == 8 || k == 13 || k == 18 || k == 23);

		if (k >= 36 || (dash ? s[k] != '-' : !isxdigit((unsigned char) s[k])))
			return false;
	}
	if (k != 36)
		return false;
	memcpy(out, DatumGetUUIDP(DirectFunctionCall1(uuid_in, CStringGetDatum(s))),
		   sizeof(pg_uuid_t));
	return true;
}

/*
 * Whether an error is a cancel raised by ProcessInterrupts: pg_cancel_backend()
 * or a statement timeout.  Code that catches query_canceled (57014) tells it
 * from the same SQLSTATE raised by user code (RAISE SQLSTATE '57014') by this
 * test: only ProcessInterrupts turns a pending cancel request into an error,
 * and once it has, the request is no longer pending.
 */
bool
ErrorIsCancel(ErrorData *edata)
{
	return edata->sqlerrcode == ERRCODE_QUERY_CANCELED &&
		edata->funcname != NULL &&
		strcmp(edata->funcname, "ProcessInterrupts") == 0;
}

/*
 * Whether an error says nothing of the work that raised it, so that the work
 * is to be tried again rather than failed for good: a cancel, a deadlock or
 * serialization failure (class 40), a lock timeout, resources (class 53), an
 * operator's intervention (class 57) or a system error (class 58).
 */
bool
ErrorIsTransient(ErrorData *edata)
{
	int			category = ERRCODE_TO_CATEGORY(edata->sqlerrcode);

	return ErrorIsCancel(edata) ||
		edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE ||
		category == ERRCODE_TRANSACTION_ROLLBACK ||
		category == ERRCODE_INSUFFICIENT_RESOURCES ||
		category == ERRCODE_OPERATOR_INTERVENTION ||
		category == ERRCODE_SYSTEM_ERROR;
}

/*
 * Run fn(arg) in a subtransaction of the caller's transaction, in the
 * caller's memory context and resource owner.  Returns NULL when it
 * succeeded; else its error, copied into the caller's memory context, with
 * all that fn did rolled back.  A cancel comes back too: the caller throws
 * it again (ErrorIsCancel) once it has undone its own state.
 */
ErrorData *
RunInSubtransaction(void (*fn) (void *arg), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}

/*
 * Where the engine finds its columns by name (the tables' columns may be in
 * any order after an update; users may add their own): remembered for each
 * row type and name, at most COLUMN_MEMORY entries, each checked when used,
 * so that a column dropped, renamed or added since, or another table of the
 * same slot, is never answered from memory.
 */
#define COLUMN_MEMORY 1024

typedef struct ColumnMemory
{
	Oid			typid;			/* the row type of the descriptor */
	const char *name;			/* the caller's name, by address */
	int			index;
} ColumnMemory;

/*
 * The 0-based index of the column name in desc (dropped columns aside), or
 * -1 when it has none.  A look-up that was made before for the same row
 * type and name costs one comparison of the name.
 */
int
TupleDescColumnIndex(TupleDesc desc, const char *name)
{
	static ColumnMemory memory[COLUMN_MEMORY];
	uint32		h = hash_combine(murmurhash32(desc->tdtypeid),
								 murmurhash32((uint32) (uintptr_t) name));
	ColumnMemory *m = &memory[h % COLUMN_MEMORY];
	int			j;

	if (m->name == name && m->typid == desc->tdtypeid &&
		m->index < desc->natts &&
		!TupleDescAttr(desc, m->index)->attisdropped &&
		strcmp(NameStr(TupleDescAttr(desc, m->index)->attname), name) == 0)
		return m->index;
	for (j = 0; j < desc->natts; j++)
		if (!TupleDescAttr(desc, j)->attisdropped &&
			strcmp(NameStr(TupleDescAttr(desc, j)->attname), name) == 0)
		{
			m->typid = desc->tdtypeid;
			m->name = name;
			m->index = j;
			return j;
		}
	return -1;
}
