/*-------------------------------------------------------------------------
 *
 * direct.c
 *	  Rows written and read without the executor, on the hottest paths.
 *
 * Every call that changes a run appends history events and often queues a
 * task.  Through SPI each of those writes is a statement: plan cache checks,
 * executor start-up, a function scan per unnested array, CHECK constraints
 * rebuilt from their stored trees, and executor shutdown, which together
 * cost several times the row itself.  Here the rows go straight to the table
 * AM, and their index entries through ExecInsertIndexTuples, which keeps
 * unique checks and partial index predicates exactly as an INSERT has them.
 * The engine writes only values its CHECK constraints accept, and these
 * tables have no triggers, rules or foreign keys, so nothing else is skipped.
 *
 * A decision task's history is read the same way, through the primary key of
 * durable.history, and its jsonb is built directly.
 *
 * Rows written here are visible to the engine's next SPI statement (SPI
 * advances the command counter before each); a direct read advances it
 * itself.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "durable.h"

/* An open table and what inserting into it needs */
typedef struct DirectTable
{
	Relation	rel;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	CommandId	cid;
	int			natts;
} DirectTable;

/* The OID of a relation of schema durable. */
static Oid
durable_relid(const char *relname)
{
	Oid			nsp = get_namespace_oid("durable", false);
	Oid			relid = get_relname_relid(relname, nsp);

	if (!OidIsValid(relid))
		elog(ERROR, "relation durable.%s does not exist", relname);
	return relid;
}

/*
 * Open a table for inserts, checking that its columns are the ones named (in
 * any order, dropped columns aside): a column this file does not know of
 * would get NULL instead of its default.  attnums[i] is set to the index in
 * the tuple of names[i].
 */
static void
direct_open(DirectTable *dt, const char *relname, int ncols,
			const char *const *names, int *attnums)
{
	TupleDesc	desc;
	int			found = 0;
	int			i;
	int			j;

	dt->rel = table_open(durable_relid(relname), RowExclusiveLock);
	desc = RelationGetDescr(dt->rel);
	dt->natts = desc->natts;
	for (i = 0; i < ncols; i++)
		attnums[i] = -1;
	for (j = 0; j < desc->natts; j++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, j);

		if (att->attisdropped)
			continue;
		for (i = 0; i < ncols; i++)
			if (strcmp(NameStr(att->attname), names[i]) == 0)
				break;
		if (i == ncols)
			elog(ERROR, "durable.%s has a column \"%s\" that durable does not write",
				 relname, NameStr(att->attname));
		attnums[i] = j;
		found++;
	}
	if (found != ncols)
		elog(ERROR, "durable.%s lacks a column that durable writes", relname);

	dt->estate = CreateExecutorState();
	dt->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(dt->rri, dt->rel, 1, NULL, 0);
	ExecOpenIndices(dt->rri, false);
	dt->slot = table_slot_create(dt->rel, NULL);
	dt->cid = GetCurrentCommandId(true);
}

/*
 * Insert one row (values and isnull have the table's natts entries) and its
 * index entries; a duplicate key raises unique_violation as an INSERT does.
 */
static void
direct_insert(DirectTable *dt, Datum *values, bool *isnull)
{
	TupleTableSlot *slot = dt->slot;
	List	   *recheck;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * dt->natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * dt->natts);
	ExecStoreVirtualTuple(slot);
	table_tuple_insert(dt->rel, slot, dt->cid, 0, NULL);
	if (dt->rri->ri_NumIndices > 0)
	{
		recheck = ExecInsertIndexTuples(dt->rri, slot, dt->estate, false,
										false, NULL, NIL);
		list_free(recheck);
	}
	ResetPerTupleExprContext(dt->estate);
}

static void
direct_close(DirectTable *dt)
{
	ExecDropSingleTupleTableSlot(dt->slot);
	ExecCloseIndices(dt->rri);
	FreeExecutorState(dt->estate);
	table_close(dt->rel, NoLock);
}

/* The columns of durable.history, in the order of the arrays below */
static const char *const history_columns[] = {
	"run_id", "event_id", "event_time", "event_type", "attributes"
};

/* Insert n history events of a run. */
void
DirectInsertEvents(pg_uuid_t *run_id, int n, const int64 *ids,
				   const TimestampTz *times, char *const *types,
				   const Datum *attrs)
{
	DirectTable dt;
	int			att[lengthof(history_columns)];
	Datum	   *values;
	bool	   *isnull;
	int			i;

	if (n == 0)
		return;
	direct_open(&dt, "history", lengthof(history_columns), history_columns,
				att);
	values = palloc0(sizeof(Datum) * dt.natts);
	isnull = palloc(sizeof(bool) * dt.natts);
	memset(isnull, true, sizeof(bool) * dt.natts);
	for (i = 0; i < lengthof(history_columns); i++)
		isnull[att[i]] = false;
	values[att[0]] = UUIDPGetDatum(run_id);
	for (i = 0; i < n; i++)
	{
		if (attrs[i] == (Datum) 0)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("null value in column \"attributes\" of relation \"history\" violates not-null constraint")));
		values[att[1]] = Int64GetDatum(ids[i]);
		values[att[2]] = TimestampTzGetDatum(times[i]);
		values[att[3]] = CStringGetTextDatum(types[i]);
		values[att[4]] = attrs[i];
		direct_insert(&dt, values, isnull);
	}
	direct_close(&dt);
}

/* The columns of durable.ready_tasks */
static const char *const ready_columns[] = {
	"namespace", "task_queue", "kind", "task_id", "run_id",
	"scheduled_event_id", "attempt"
};

/*
 * Queue n tasks of a run; each takes its task_id from the column's sequence,
 * as the column default does.
 */
void
DirectInsertReadyTasks(const char *namespace, pg_uuid_t *run_id, int n,
					   char *const *queues, const char *kinds,
					   const int64 *scheduled, const int32 *attempts)
{
	DirectTable dt;
	int			att[lengthof(ready_columns)];
	Datum		values[16];
	bool		isnull[16];
	Datum	   *vals = values;
	bool	   *nulls = isnull;
	Oid			seq;
	int			i;

	if (n == 0)
		return;
	seq = durable_relid("ready_task_seq");
	direct_open(&dt, "ready_tasks", lengthof(ready_columns), ready_columns,
				att);
	if (dt.natts > lengthof(values))
	{
		vals = palloc(sizeof(Datum) * dt.natts);
		nulls = palloc(sizeof(bool) * dt.natts);
	}
	memset(nulls, true, sizeof(bool) * dt.natts);
	for (i = 0; i < lengthof(ready_columns); i++)
		nulls[att[i]] = false;
	vals[att[0]] = CStringGetTextDatum(namespace);
	vals[att[4]] = UUIDPGetDatum(run_id);
	for (i = 0; i < n; i++)
	{
		vals[att[1]] = CStringGetTextDatum(queues[i]);
		vals[att[2]] = CharGetDatum(kinds[i]);
		vals[att[3]] = Int64GetDatum(nextval_internal(seq, false));
		vals[att[5]] = Int64GetDatum(scheduled[i]);
		vals[att[6]] = Int32GetDatum(attempts[i]);
		direct_insert(&dt, vals, nulls);
	}
	direct_close(&dt);
}
