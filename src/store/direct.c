/*-------------------------------------------------------------------------
 *
 * direct.c
 *	  Rows written and read without the executor, on the hottest paths.
 *
 * Every call that changes a run appends history events and often queues a
 * task; an activity's row is inserted, locked, updated and logged on every
 * attempt.  Through SPI each of those writes is a statement: plan cache checks,
 * executor start-up, a function scan per unnested array, CHECK constraints
 * rebuilt from their stored trees, and executor shutdown, which together
 * cost several times the row itself.  Here the rows go straight to the table
 * AM, and their index entries through ExecInsertIndexTuples, which keeps
 * unique checks and partial index predicates exactly as an INSERT has them.
 *
 * What a statement would do besides, and what this file does instead (docs/operations.md
 * "What durable's tables support" says it for users):
 *
 * - A read-only transaction (and every transaction of a hot standby) is
 *   refused with 25006 as the executor refuses a write: each SQL function
 *   that writes calls RequireWritableTransaction first, and every table
 *   opened here for writing checks again.
 * - The schema's own CHECK constraints are not evaluated: the engine writes
 *   only values they accept.  A CHECK constraint a user added (one whose
 *   name is not the schema's) is evaluated with ExecConstraints on every row
 *   written here, as an INSERT or UPDATE would; NOT NULL is checked on every
 *   row (a loop over the columns, nothing compiled).
 * - A column a user added gets, in a row inserted here, its default as an
 *   INSERT would give it (compiled once per call, only when there is one);
 *   rows updated here keep its value, as an UPDATE that does not name it.
 * - Enabled triggers (user triggers and those of foreign keys), rules, forced
 *   row-level security and stored generated columns are not honoured here,
 *   and falling back to a statement for them would leave a second, rarely
 *   run copy of every hot path: a table that has one is refused with 0A000
 *   naming it, on every call that writes the table, until it is dropped.  A
 *   column of another type than the engine's, or missing, is refused too.
 * - Logical decoding reads the heap's WAL, which heap_insert, heap_update
 *   and heap_delete write the same way for the executor and for this file,
 *   so a publication of these tables sees every change; an UPDATE or DELETE
 *   of a table published without a replica identity is refused as the
 *   executor refuses it (CheckCmdReplicaIdentity).
 *
 * All of these checks read the table's relcache entry (trigdesc, rules,
 * constr, the tuple descriptor): a few comparisons a call, nothing looked up.
 *
 * A decision task's history is read the same way, through the primary key of
 * durable.history, from the first event or from a later one (a replay that
 * read the start already: sqlwf/replay.c), and its jsonb is built directly.
 *
 * Tables are opened by name at each call, or in an executor's chain at its
 * first write and kept open to the chain's end ("Tables kept open for an
 * executor's chain" below); when the extension was dropped meanwhile (a
 * poll that waited for DROP EXTENSION's locks) the call gets a clear 55000
 * error instead of a failed open of a vanished OID.
 *
 * Rows written here are visible to the engine's next SPI statement (SPI
 * advances the command counter before each); a direct read advances it
 * itself.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/heapam.h"
#include "access/itup.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "rewrite/rewriteHandler.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "base/invalidation.h"
#include "base/util.h"
#include "store/claim_mark.h"
#include "store/claim_order.h"
#include "store/direct.h"
#include "store/index_info.h"
#include "store/kept_task.h"
#include "store/queue_controls.h"

/* An open table and what inserting into it needs */
typedef struct DirectTable
{
	Relation	rel;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	CommandId	cid;
	int			natts;
	bool		user_checks;	/* has a CHECK constraint of a user */
	int			ndefaults;		/* columns a user added that have a default */
	int		   *default_att;	/* their 0-based indexes */
	ExprState **default_expr;	/* and their defaults */
	struct OpenTable *kept;		/* the entry it came from, or NULL */
} DirectTable;

/* A column the engine reads or writes, and its type */
typedef struct DirectColumn
{
	const char *name;
	Oid			type;
} DirectColumn;

/* The CHECK constraints of the schema, which the engine's values satisfy */
static const char *const schema_checks[] = {
	"runs_status_check", "ready_tasks_kind_check", "activities_state_check",
	"ready_tasks_priority_check", "runs_priority_check",
	"activities_priority_check", "activity_attempt_log_outcome_check"
};

/* The tables DurableOpenTable opened, by name: at most a few dozen */
#define REMEMBERED_TABLES 32

typedef struct RememberedTable
{
	const char *relname;		/* the caller's name, by address */
	Oid			relid;
	Oid			nsp;
} RememberedTable;

static RememberedTable remembered[REMEMBERED_TABLES];
static int	n_remembered = 0;
static bool remembered_callbacks = false;

/*
 * A table renamed, dropped or moved, or a schema renamed: forget them all,
 * looked up again by name at their next open.
 */
static void
forget_tables(Datum arg, Oid relid)
{
	n_remembered = 0;
}

static void
forget_tables_syscache(Datum arg, int cacheid, uint32 hashvalue)
{
	n_remembered = 0;
}

static void
remember_table(const char *relname, Relation rel)
{
	int			i;

	if (!remembered_callbacks)
	{
		DurableRegisterRelcacheCallback(forget_tables, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, forget_tables_syscache,
									  (Datum) 0);
		remembered_callbacks = true;
	}

	for (i = 0; i < n_remembered; i++)
		if (remembered[i].relname == relname)
			break;
	if (i == n_remembered)
	{
		if (n_remembered == REMEMBERED_TABLES)
			return;
		n_remembered++;
	}
	remembered[i].relname = relname;
	remembered[i].relid = RelationGetRelid(rel);
	remembered[i].nsp = RelationGetNamespace(rel);
}

/*
 * The table that relname opened last, locked, if it still exists (a DROP
 * EXTENSION since removes it; the lock taken first makes that visible) and
 * still has that name in that schema, which no rename of either has changed
 * since (forget_tables); otherwise NULL and no lock.
 */
static Relation
remembered_table(const char *relname, LOCKMODE lockmode)
{
	Relation	rel;
	int			i;

	for (i = 0; i < n_remembered; i++)
		if (remembered[i].relname == relname)
			break;
	if (i == n_remembered)
		return NULL;
	rel = try_table_open(remembered[i].relid, lockmode);
	if (rel == NULL)
		return NULL;
	if (i < n_remembered && RelationGetNamespace(rel) == remembered[i].nsp &&
		strcmp(RelationGetRelationName(rel), relname) == 0)
		return rel;
	table_close(rel, lockmode);
	return NULL;
}

/*
 * Open durable.<relname>, or return NULL when there is none: looked up by
 * name (or remembered from the last open, and checked), locked, and checked
 * to still exist after the lock is granted (a call that waited for DROP
 * EXTENSION's locks finds its OID dropped).
 */
static Relation
try_open_durable_table(const char *relname, LOCKMODE lockmode)
{
	Oid			nsp;
	Oid			relid;
	Relation	rel;

	/*
	 * The table this name opened last, if it is still there under the same
	 * name and schema once locked: the look-ups by name are skipped.
	 */
	rel = remembered_table(relname, lockmode);
	if (rel != NULL)
		return rel;
	nsp = get_namespace_oid("durable", true);
	relid = OidIsValid(nsp) ? get_relname_relid(relname, nsp) : InvalidOid;
	rel = OidIsValid(relid) ? try_table_open(relid, lockmode) : NULL;
	if (rel != NULL)
		remember_table(relname, rel);
	return rel;
}

/*
 * Open durable.<relname> (try_open_durable_table), or report that the
 * extension is gone.
 */
Relation
DurableOpenTable(const char *relname, LOCKMODE lockmode)
{
	Relation	rel = try_open_durable_table(relname, lockmode);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"durable\" was dropped"),
				 errdetail("Table durable.%s no longer exists: the extension was dropped while this call ran or waited.",
						   relname)));
	return rel;
}

/* The 0-based index of a column of rel, by name, checking its type. */
static int
column_index_typed(Relation rel, const char *name, Oid type)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			j = TupleDescColumnIndex(desc, name);

	if (j >= 0)
	{
		Form_pg_attribute att = TupleDescAttr(desc, j);

		if (OidIsValid(type) && att->atttypid != type)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of durable.%s has type %s instead of %s",
							name, RelationGetRelationName(rel),
							format_type_be(att->atttypid),
							format_type_be(type)),
					 errdetail("durable reads and writes this column as %s.",
							   format_type_be(type)),
					 errhint("Change the column back; see \"What durable's tables support\" in durable's docs/operations.md.")));
		return j;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("durable.%s lacks column \"%s\"",
					RelationGetRelationName(rel), name),
			 errhint("durable needs its tables as its extension script made them.")));
	return -1;					/* keep compiler quiet */
}

/*
 * The 0-based index of a column that a database not yet updated lacks (one
 * added by a later version), checking its type; -1 when it is missing.
 */
static int
column_index_optional(Relation rel, const char *name, Oid type)
{
	if (TupleDescColumnIndex(RelationGetDescr(rel), name) >= 0)
		return column_index_typed(rel, name, type);
	return -1;
}

/* The primary key index of a durable table, which every direct scan uses. */
static Oid
primary_key(Relation rel)
{
	Oid			pkey = RelationGetPrimaryKeyIndex(rel);

	if (!OidIsValid(pkey))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("durable.%s has no primary key",
						RelationGetRelationName(rel)),
				 errhint("durable needs its tables as its extension script made them.")));
	return pkey;
}

/*
 * The tid of the row that snapshot sees under these keys of the table's
 * primary key; false when there is none.
 */
static bool
primary_key_tid(Relation rel, Snapshot snapshot, int nkeys, ScanKey keys,
				ItemPointer tid)
{
	SysScanDesc scan = systable_beginscan(rel, primary_key(rel), true,
										  snapshot, nkeys, keys);
	HeapTuple	tuple = systable_getnext(scan);
	bool		found = HeapTupleIsValid(tuple);

	if (found)
		*tid = tuple->t_self;
	systable_endscan(scan);
	return found;
}

/* 0A000 for something on a durable table that the direct paths cannot honour. */
static void
refuse_table(Relation rel, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("durable does not support %s on table durable.%s",
					what, RelationGetRelationName(rel)),
			 errdetail("durable writes this table without the executor, which would skip it."),
			 errhint("Drop it; see \"What durable's tables support\" in durable's docs/operations.md.")));
}

/*
 * Check, before a write, what a statement would check or do that the direct
 * paths cannot: a read-only transaction, triggers, rules, forced row-level
 * security, stored generated columns (each refused).  Returns whether the
 * table has a CHECK constraint a user added, which the caller evaluates.
 * Reads only the relcache entry.
 */
static bool
direct_check_table(Relation rel)
{
	TriggerDesc *trig = rel->trigdesc;
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	bool		user_checks = false;
	int			i;
	int			j;

	if (XactReadOnly)
		PreventCommandIfReadOnly(psprintf("a write of durable.%s",
										  RelationGetRelationName(rel)));
	/* Disabled triggers and TRUNCATE triggers do not fire for our writes. */
	for (i = 0; trig != NULL && i < trig->numtriggers; i++)
		if ((trig->triggers[i].tgtype &
			 (TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE |
			  TRIGGER_TYPE_DELETE)) != 0 &&
			trig->triggers[i].tgenabled != TRIGGER_DISABLED)
			refuse_table(rel, psprintf("trigger \"%s\"",
									   trig->triggers[i].tgname));
	if (rel->rd_rules != NULL)
		refuse_table(rel, "rules");
	if (rel->rd_rel->relrowsecurity && rel->rd_rel->relforcerowsecurity)
		refuse_table(rel, "forced row-level security");
	if (constr == NULL)
		return false;
	if (constr->has_generated_stored)
		refuse_table(rel, "a generated column");
	for (i = 0; i < constr->num_check && !user_checks; i++)
	{
		user_checks = true;
		for (j = 0; j < lengthof(schema_checks); j++)
			if (strcmp(constr->check[i].ccname, schema_checks[j]) == 0)
				user_checks = false;
	}
	return user_checks;
}

/* The error of an INSERT or UPDATE that puts NULL in NOT NULL column j. */
static void
report_not_null(Relation rel, int j)
{
	ereport(ERROR,
			(errcode(ERRCODE_NOT_NULL_VIOLATION),
			 errmsg("null value in column \"%s\" of relation \"%s\" violates not-null constraint",
					NameStr(TupleDescAttr(RelationGetDescr(rel), j)->attname),
					RelationGetRelationName(rel)),
			 errtablecol(rel, j + 1)));
}

/*
 * Raise what an INSERT or UPDATE raises for a NULL in a NOT NULL column of
 * the row in slot (all attributes deformed).
 */
static void
check_not_null(Relation rel, TupleTableSlot *slot)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			j;

	if (desc->constr == NULL || !desc->constr->has_not_null)
		return;
	for (j = 0; j < desc->natts; j++)
		if (slot->tts_isnull[j] && TupleDescAttr(desc, j)->attnotnull)
			report_not_null(rel, j);
}

/*
 * Check a new version of a row, made by heap_modify_tuple from one that
 * satisfied the table's constraints, as an UPDATE would: a column set to
 * NULL must allow it (the columns kept need no check), and with user_checks
 * every CHECK constraint is evaluated.
 */
static void
check_new_row(Relation rel, HeapTuple tuple, const bool *replace,
			  const bool *repl_null, bool user_checks)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			j;

	for (j = 0; j < desc->natts; j++)
		if (replace[j] && repl_null[j] && TupleDescAttr(desc, j)->attnotnull)
			report_not_null(rel, j);
	if (user_checks)
	{
		TupleTableSlot *slot = MakeSingleTupleTableSlot(desc,
														&TTSOpsHeapTuple);
		EState	   *estate = CreateExecutorState();
		ResultRelInfo *rri = makeNode(ResultRelInfo);

		ExecStoreHeapTuple(tuple, slot, false);
		InitResultRelInfo(rri, rel, 0, NULL, 0);
		ExecConstraints(rri, slot, estate);
		FreeExecutorState(estate);
		ExecDropSingleTupleTableSlot(slot);
	}
}

/*
 * Tables kept open for an executor's chain
 *
 * An executor's chain runs several tasks of a run in one transaction, and
 * each task writes the same few tables.  Opening one (its lock, its relcache
 * entry, an IndexInfo built for each index, an executor state, a slot) costs
 * about as much as the rows written into it, so a chain (DirectTablesKeep)
 * keeps each table it writes open from its first write to the chain's end
 * (DirectTablesKeepEnd).  An error closes them with the subtransaction or
 * transaction it aborts; a utility statement of user code inside the chain
 * closes them first (DirectTablesRelease, from the ProcessUtility hook), since
 * it could drop or alter one; the commit closes any left.  No other session
 * can change a table meanwhile: the lock held to the transaction's end
 * conflicts with every schema change.  Outside a chain every call opens and
 * closes what it writes.
 *
 * A table is opened under the current resource owner, so that an error while
 * opening it cleans up as it always did; once open, its references and locks
 * are taken again by the transaction's top resource owner and let go by the
 * current one (a subtransaction's, such as a decision task's), so that a
 * subtransaction's end neither closes the table nor reports it leaked.  A
 * table asked for while in use (a nested call: user code that calls durable)
 * is opened afresh and closed by its caller.
 */
typedef struct OpenTable
{
	const char *relname;
	DirectTable dt;				/* rel, estate, rri, slot, natts */
	bool		indexes_open;	/* rri has its indexes (OpenIndicesKeptInfo) */
	bool		in_use;			/* between direct_open* and direct_close */
	SubTransactionId used_subid;	/* the subtransaction that uses it */
	struct OpenTable *next;
} OpenTable;

static MemoryContext open_tables_cxt = NULL;	/* under TopTransactionContext */
static OpenTable *open_tables = NULL;
/* The subtransaction of the chain that keeps tables, or none */
static SubTransactionId keeping_subid = InvalidSubTransactionId;
static bool open_tables_callbacks = false;

/*
 * Close the indexes OpenIndicesKeptInfo opened for rri, keeping their
 * RowExclusiveLocks to the end of the transaction, as the table's lock is
 * kept (and as an index scan keeps its index's lock).  ExecCloseIndices
 * releases them, so that the next open of the same index in the transaction
 * (a call writes a table several times, an activity cycle opens some fifty
 * indexes) acquired it again through the lock manager and read the pending
 * invalidation messages; with the lock kept, that open finds it in the
 * backend's own lock table.  Holding an index's lock longer than its table's
 * changes no conflict: the table's lock already outlives every statement
 * that could drop or rebuild the index.
 */
static void
close_indexes_keep_locks(ResultRelInfo *rri)
{
	int			i;

	for (i = 0; i < rri->ri_NumIndices; i++)
	{
		if (rri->ri_IndexRelationDescs[i] != NULL)
			index_close(rri->ri_IndexRelationDescs[i], NoLock);
		rri->ri_IndexRelationDescs[i] = NULL;
	}
}

/*
 * Take rel's references (itself, its lock, and with indexes those of its
 * indexes) and the slot's tuple descriptor pin into the top resource owner,
 * from the current one.
 */
static void
keep_references(Relation rel, ResultRelInfo *rri, TupleTableSlot *slot,
				bool indexes)
{
	ResourceOwner owner = CurrentResourceOwner;
	TupleDesc	desc = slot != NULL ? slot->tts_tupleDescriptor : NULL;
	int			i;

	if (owner == TopTransactionResourceOwner)
		return;
	CurrentResourceOwner = TopTransactionResourceOwner;
	if (rel != NULL)
	{
		LockRelationOid(RelationGetRelid(rel), RowExclusiveLock);
		RelationIncrementReferenceCount(rel);
	}
	for (i = 0; indexes && i < rri->ri_NumIndices; i++)
	{
		LockRelationOid(RelationGetRelid(rri->ri_IndexRelationDescs[i]),
						RowExclusiveLock);
		RelationIncrementReferenceCount(rri->ri_IndexRelationDescs[i]);
	}
	if (desc != NULL && desc->tdrefcount >= 0)
		IncrTupleDescRefCount(desc);
	CurrentResourceOwner = owner;
	if (rel != NULL)
		RelationDecrementReferenceCount(rel);
	for (i = 0; indexes && i < rri->ri_NumIndices; i++)
	{
		UnlockRelationOid(RelationGetRelid(rri->ri_IndexRelationDescs[i]),
						  RowExclusiveLock);
		RelationDecrementReferenceCount(rri->ri_IndexRelationDescs[i]);
	}
	if (desc != NULL && desc->tdrefcount >= 0)
		DecrTupleDescRefCount(desc);
}

/* Open ot's indexes for inserts, once, kept as the table is. */
static void
open_table_indexes(OpenTable *ot)
{
	MemoryContext oldcxt;

	if (ot->indexes_open)
		return;
	oldcxt = MemoryContextSwitchTo(open_tables_cxt);
	OpenIndicesKeptInfo(ot->dt.rri);
	MemoryContextSwitchTo(oldcxt);
	keep_references(NULL, ot->dt.rri, NULL, true);
	ot->indexes_open = true;
}

/* Close a kept table, under the owner that holds it. */
static void
close_open_table(OpenTable *ot)
{
	ResourceOwner owner = CurrentResourceOwner;

	CurrentResourceOwner = TopTransactionResourceOwner;
	ExecDropSingleTupleTableSlot(ot->dt.slot);
	if (ot->indexes_open)
		close_indexes_keep_locks(ot->dt.rri);
	FreeExecutorState(ot->dt.estate);
	table_close(ot->dt.rel, NoLock);
	CurrentResourceOwner = owner;
}

/*
 * Close the kept tables that are not in use.  One in use is left to the
 * resource owners: its slot may hold a buffer pin of another owner.
 */
static void
close_open_tables(void)
{
	OpenTable **link = &open_tables;

	while (*link != NULL)
	{
		OpenTable  *ot = *link;

		if (ot->in_use)
		{
			link = &ot->next;
			continue;
		}
		*link = ot->next;
		close_open_table(ot);
	}
}

static void
open_tables_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* A chain that kept them did not end (an error caught in C) */
			close_open_tables();
			keeping_subid = InvalidSubTransactionId;
			break;
		default:
			/* Gone with the transaction's owner and memory */
			open_tables = NULL;
			open_tables_cxt = NULL;
			keeping_subid = InvalidSubTransactionId;
			break;
	}
}

/*
 * A subtransaction aborts.  A table in use in it is free again: the error
 * left its caller before direct_close, and its slot is emptied now, under
 * the subtransaction's resource owner (still the current one), which holds
 * the buffer pin the slot may have (a row locked into it).  The chain that
 * kept tables ends if it began in the subtransaction, and closes them.
 */
static void
open_tables_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							 SubTransactionId parentSubid, void *arg)
{
	OpenTable  *ot;

	if (event != SUBXACT_EVENT_ABORT_SUB || open_tables == NULL)
		return;
	for (ot = open_tables; ot != NULL; ot = ot->next)
		if (ot->in_use && ot->used_subid >= mySubid)
		{
			ExecClearTuple(ot->dt.slot);
			ot->in_use = false;
		}
	if (keeping_subid != InvalidSubTransactionId && keeping_subid >= mySubid)
	{
		close_open_tables();
		keeping_subid = InvalidSubTransactionId;
	}
}

/*
 * An executor's chain begins: keep the tables it writes open to its end.
 * Returns false, and keeps nothing more, within a chain that keeps them
 * already (user code of a chain that runs durable.run_tasks()); only a call
 * that returned true calls DirectTablesKeepEnd.
 */
bool
DirectTablesKeep(void)
{
	if (keeping_subid != InvalidSubTransactionId)
		return false;
	if (!open_tables_callbacks)
	{
		RegisterXactCallback(open_tables_xact_callback, NULL);
		RegisterSubXactCallback(open_tables_subxact_callback, NULL);
		open_tables_callbacks = true;
	}
	keeping_subid = GetCurrentSubTransactionId();
	return true;
}

/* The chain ends: close the tables it kept. */
void
DirectTablesKeepEnd(void)
{
	close_open_tables();
	keeping_subid = InvalidSubTransactionId;
	/* Their memory too, unless one is in use (not expected) */
	if (open_tables == NULL && open_tables_cxt != NULL)
	{
		MemoryContextDelete(open_tables_cxt);
		open_tables_cxt = NULL;
	}
}

/*
 * Close the tables kept open that are not in use: a utility statement is
 * about to run (the ProcessUtility hook), which may drop, truncate or alter
 * them, and would find them in use.  The chain keeps those it opens next.
 */
void
DirectTablesRelease(void)
{
	if (open_tables != NULL)
		close_open_tables();
}

/*
 * The executor state, result relation and slot of dt, which inserts need, as
 * do the index entries of an update that is not HOT.
 */
static void
open_table_state(DirectTable *dt)
{
	dt->estate = CreateExecutorState();
	dt->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(dt->rri, dt->rel, 0, NULL, 0);
	dt->slot = table_slot_create(dt->rel, NULL);
}

/*
 * Open durable.<relname> in the current memory context and resource owner:
 * for inserts (indexes) with its executor state, result relation, indexes
 * and a slot; for updates only the relation, the rest made when an update
 * needs index entries (index_new_version).
 */
static void
open_table_fresh(DirectTable *dt, const char *relname, bool indexes)
{
	dt->rel = DurableOpenTable(relname, RowExclusiveLock);
	dt->user_checks = direct_check_table(dt->rel);
	dt->natts = RelationGetDescr(dt->rel)->natts;
	dt->estate = NULL;
	dt->rri = NULL;
	dt->slot = NULL;
	if (indexes)
	{
		open_table_state(dt);
		OpenIndicesKeptInfo(dt->rri);
	}
	dt->cid = GetCurrentCommandId(true);
	dt->ndefaults = 0;
	dt->kept = NULL;
}

/*
 * The kept table durable.<relname>, opened now if not yet; NULL outside a
 * chain that keeps tables.
 */
static OpenTable *
open_table_kept(const char *relname)
{
	OpenTable  *ot;
	MemoryContext oldcxt;

	if (keeping_subid == InvalidSubTransactionId)
		return NULL;
	for (ot = open_tables; ot != NULL; ot = ot->next)
		if (strcmp(ot->relname, relname) == 0)
			return ot;
	if (open_tables_cxt == NULL)
		open_tables_cxt = AllocSetContextCreate(TopTransactionContext,
												"durable open tables",
												ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(open_tables_cxt);
	ot = palloc0(sizeof(OpenTable));
	ot->relname = pstrdup(relname);
	open_table_fresh(&ot->dt, relname, false);
	open_table_state(&ot->dt);
	MemoryContextSwitchTo(oldcxt);
	keep_references(ot->dt.rel, ot->dt.rri, ot->dt.slot, false);
	ot->next = open_tables;
	open_tables = ot;
	return ot;
}

/* Where a write's columns are in its table, and the defaults of the others */
typedef struct TableLayout
{
	DirectColumn *cols;			/* the caller's column lists, or copies */
	int			ncols;
	DirectColumn *optcols;
	int			nopt;
	int		   *attnums;
	int		   *optattnums;
	int			ndefaults;
	int		   *default_att;
	ExprState **default_expr;
} TableLayout;

/*
 * Where the columns cols (and optionally optcols) are in dt's table, and
 * the defaults of the other columns, which a user added, compiled in dt's
 * executor state: into layout.
 */
static void
table_layout(DirectTable *dt, TableLayout *layout)
{
	TupleDesc	desc = RelationGetDescr(dt->rel);
	int			i;
	int			j;
	int			known;

	for (i = 0; i < layout->ncols; i++)
		layout->attnums[i] = column_index_typed(dt->rel, layout->cols[i].name,
												layout->cols[i].type);
	known = layout->ncols;
	for (i = 0; i < layout->nopt; i++)
		if ((layout->optattnums[i] =
			 column_index_optional(dt->rel, layout->optcols[i].name,
								   layout->optcols[i].type)) >= 0)
			known++;

	layout->ndefaults = 0;
	if (desc->natts == known)
		return;
	layout->default_att = palloc(sizeof(int) * desc->natts);
	layout->default_expr = palloc(sizeof(ExprState *) * desc->natts);
	for (j = 0; j < desc->natts; j++)
	{
		Node	   *expr;
		bool		given = false;

		if (TupleDescAttr(desc, j)->attisdropped)
			continue;
		for (i = 0; i < layout->ncols && !given; i++)
			given = (layout->attnums[i] == j);
		for (i = 0; i < layout->nopt && !given; i++)
			given = (layout->optattnums[i] == j);
		if (given)
			continue;
		expr = build_column_default(dt->rel, j + 1);
		if (expr == NULL)
			continue;
		layout->default_att[layout->ndefaults] = j;
		layout->default_expr[layout->ndefaults] =
			ExecPrepareExpr((Expr *) expr, dt->estate);
		layout->ndefaults++;
	}
}

/* Whether two lists of n columns name the same columns of the same types */
static bool
same_columns(const DirectColumn *a, const DirectColumn *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].type != b[i].type ||
			(a[i].name != b[i].name && strcmp(a[i].name, b[i].name) != 0))
			return false;
	return true;
}

/* A copy of n columns, in the current memory context */
static DirectColumn *
copy_columns(const DirectColumn *cols, int n)
{
	DirectColumn *copy = palloc(sizeof(DirectColumn) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		copy[i].name = pstrdup(cols[i].name);
		copy[i].type = cols[i].type;
	}
	return copy;
}

/*
 * Layouts remembered across transactions, for every write (an API call's
 * table opened afresh, a chain's kept one).  Finding the columns by name and
 * the defaults of the others cost some 6 thousand instructions an open,
 * eight opens an activity cycle.  What a layout says
 * changes only with the table's definition, and every change of that (a
 * column added, dropped or renamed, a default set) invalidates the table's
 * relcache entry, which forgets them all (forget_layouts); the open that
 * uses one has locked the table, which read the invalidations first.  The
 * defaults are kept as expressions and compiled into each open's executor
 * state.
 */
typedef struct RememberedLayout
{
	Oid			relid;
	int			natts;			/* of the table's descriptor, checked too */
	TableLayout layout;			/* default_expr unused */
	Expr	  **default_node;
	struct RememberedLayout *next;
} RememberedLayout;

static MemoryContext layouts_cxt = NULL;
static RememberedLayout *remembered_layouts = NULL;

static void
forget_layouts(Datum arg, Oid relid)
{
	RememberedLayout *r;

	if (remembered_layouts == NULL)
		return;
	if (OidIsValid(relid))
	{
		for (r = remembered_layouts; r != NULL; r = r->next)
			if (r->relid == relid)
				break;
		if (r == NULL)
			return;
	}
	remembered_layouts = NULL;
	MemoryContextReset(layouts_cxt);
}

/*
 * table_layout, remembered: layout has the caller's column lists and
 * arrays, and gets the defaults (of columns a user added: rare) compiled in
 * dt's executor state at each write.
 * Whatever may read the catalogs (building or compiling a default) may also
 * take a lock and so run forget_layouts, which frees every remembered
 * layout: it is done only while no remembered layout is in hand.
 */
static void
remembered_layout(DirectTable *dt, TableLayout *layout)
{
	Oid			relid = RelationGetRelid(dt->rel);
	int			natts = RelationGetDescr(dt->rel)->natts;
	RememberedLayout *r;
	Expr	  **nodes;
	MemoryContext oldcxt;
	int			i;

	for (r = remembered_layouts; r != NULL; r = r->next)
		if (r->relid == relid && r->natts == natts &&
			r->layout.ncols == layout->ncols && r->layout.nopt == layout->nopt &&
			same_columns(r->layout.cols, layout->cols, layout->ncols) &&
			same_columns(r->layout.optcols, layout->optcols, layout->nopt))
			break;
	if (r != NULL)
	{
		/* Copied out first: memory only, nothing that forgets r */
		memcpy(layout->attnums, r->layout.attnums,
			   sizeof(int) * layout->ncols);
		if (layout->nopt > 0)
			memcpy(layout->optattnums, r->layout.optattnums,
				   sizeof(int) * layout->nopt);
		layout->ndefaults = r->layout.ndefaults;
		if (layout->ndefaults == 0)
			return;
		layout->default_att = palloc(sizeof(int) * layout->ndefaults);
		layout->default_expr = palloc(sizeof(ExprState *) * layout->ndefaults);
		nodes = palloc(sizeof(Expr *) * layout->ndefaults);
		for (i = 0; i < layout->ndefaults; i++)
		{
			layout->default_att[i] = r->layout.default_att[i];
			nodes[i] = copyObject(r->default_node[i]);
		}
		for (i = 0; i < layout->ndefaults; i++)
			layout->default_expr[i] = ExecPrepareExpr(nodes[i], dt->estate);
		return;
	}

	table_layout(dt, layout);
	nodes = palloc(sizeof(Expr *) * Max(layout->ndefaults, 1));
	for (i = 0; i < layout->ndefaults; i++)
		nodes[i] = (Expr *) build_column_default(dt->rel,
												 layout->default_att[i] + 1);

	/* Remembered: memory only from here on */
	if (layouts_cxt == NULL)
	{
		layouts_cxt = AllocSetContextCreate(CacheMemoryContext,
											"durable table layouts",
											ALLOCSET_SMALL_SIZES);
		DurableRegisterRelcacheCallback(forget_layouts, (Datum) 0);
	}
	oldcxt = MemoryContextSwitchTo(layouts_cxt);
	r = palloc0(sizeof(RememberedLayout));
	r->relid = relid;
	r->natts = natts;
	r->layout.cols = copy_columns(layout->cols, layout->ncols);
	r->layout.ncols = layout->ncols;
	r->layout.optcols = copy_columns(layout->optcols, layout->nopt);
	r->layout.nopt = layout->nopt;
	r->layout.attnums = palloc(sizeof(int) * Max(layout->ncols, 1));
	memcpy(r->layout.attnums, layout->attnums, sizeof(int) * layout->ncols);
	r->layout.optattnums = palloc(sizeof(int) * Max(layout->nopt, 1));
	if (layout->nopt > 0)
		memcpy(r->layout.optattnums, layout->optattnums,
			   sizeof(int) * layout->nopt);
	r->layout.ndefaults = layout->ndefaults;
	r->layout.default_att = palloc(sizeof(int) * Max(layout->ndefaults, 1));
	r->default_node = palloc(sizeof(Expr *) * Max(layout->ndefaults, 1));
	for (i = 0; i < layout->ndefaults; i++)
	{
		r->layout.default_att[i] = layout->default_att[i];
		r->default_node[i] = copyObject(nodes[i]);
	}
	MemoryContextSwitchTo(oldcxt);
	r->next = remembered_layouts;
	remembered_layouts = r;
}

/*
 * Take the kept table durable.<relname> into *dt for a write, or open it
 * afresh (dt->kept NULL) when it is in use or none can be kept.  The checks
 * of a write (direct_check_table) are made on every call.
 */
static void
direct_open_table(DirectTable *dt, const char *relname, bool indexes)
{
	OpenTable  *ot = open_table_kept(relname);

	if (ot == NULL || ot->in_use)
	{
		open_table_fresh(dt, relname, indexes);
		return;
	}
	if (indexes)
		open_table_indexes(ot);
	*dt = ot->dt;
	dt->user_checks = direct_check_table(dt->rel);
	dt->cid = GetCurrentCommandId(true);
	dt->ndefaults = 0;
	dt->kept = ot;
	ot->in_use = true;
	ot->used_subid = GetCurrentSubTransactionId();
}

/*
 * Open a table for inserts, checking that it has the columns named, of
 * their types (in any order, dropped columns aside).  attnums[i] is set to
 * the index in the tuple of cols[i].  Other columns, which a user added, get
 * their default in each row inserted, or NULL.
 */
static void
direct_open_with(DirectTable *dt, const char *relname, int ncols,
				 const DirectColumn *cols, int *attnums, int nopt,
				 const DirectColumn *optcols, int *optattnums)
{
	TableLayout layout;

	direct_open_table(dt, relname, true);
	layout.cols = (DirectColumn *) cols;
	layout.ncols = ncols;
	layout.optcols = (DirectColumn *) optcols;
	layout.nopt = nopt;
	layout.attnums = attnums;
	layout.optattnums = optattnums;
	remembered_layout(dt, &layout);
	dt->ndefaults = layout.ndefaults;
	dt->default_att = layout.default_att;
	dt->default_expr = layout.default_expr;
}

static void
direct_open(DirectTable *dt, const char *relname, int ncols,
			const DirectColumn *cols, int *attnums)
{
	direct_open_with(dt, relname, ncols, cols, attnums, 0, NULL, NULL);
}

static void direct_fill_slot(DirectTable *dt, Datum *values, bool *isnull);

/*
 * The tables this transaction wrote rows into (the inserts and updates of
 * this file), by OID: lock_row looks for a version of a row that this
 * transaction made only in these.  More than WRITTEN_TABLES: in all.
 */
#define WRITTEN_TABLES 16

static struct
{
	LocalTransactionId lxid;	/* the transaction of the list */
	int			n;				/* > WRITTEN_TABLES: any table */
	Oid			relids[WRITTEN_TABLES];
} written;

static void
note_written(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	int			i;

	if (written.lxid != MyProc->lxid)
	{
		written.lxid = MyProc->lxid;
		written.n = 0;
	}
	for (i = 0; i < written.n && i < WRITTEN_TABLES; i++)
		if (written.relids[i] == relid)
			return;
	if (written.n < WRITTEN_TABLES)
		written.relids[written.n] = relid;
	if (written.n <= WRITTEN_TABLES)
		written.n++;
}

static bool
wrote_table(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	int			i;

	if (written.lxid != MyProc->lxid)
		return false;
	if (written.n > WRITTEN_TABLES)
		return true;
	for (i = 0; i < written.n; i++)
		if (written.relids[i] == relid)
			return true;
	return false;
}

/*
 * Insert one row (values and isnull have the table's natts entries, NULL in
 * the columns the engine does not know) and its index entries; columns a
 * user added get their defaults; a duplicate key raises unique_violation
 * and a NULL in a NOT NULL column not_null_violation, as an INSERT does.
 */
static void
direct_insert(DirectTable *dt, Datum *values, bool *isnull)
{
	List	   *recheck;

	direct_fill_slot(dt, values, isnull);
	table_tuple_insert(dt->rel, dt->slot, dt->cid, 0, NULL);
	note_written(dt->rel);
	if (dt->rri->ri_NumIndices > 0)
	{
		recheck = ExecInsertIndexTuples(dt->rri, dt->slot, dt->estate, false,
										false, NULL, NIL);
		list_free(recheck);
	}
	ResetPerTupleExprContext(dt->estate);
}

/*
 * Put a new row into dt's slot (values and isnull have the table's natts
 * entries), with the defaults of the columns a user added, and check it as
 * an INSERT would: NOT NULL, and the CHECK constraints a user added.
 */
static void
direct_fill_slot(DirectTable *dt, Datum *values, bool *isnull)
{
	TupleTableSlot *slot = dt->slot;
	int			i;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * dt->natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * dt->natts);
	for (i = 0; i < dt->ndefaults; i++)
	{
		int			att = dt->default_att[i];

		slot->tts_values[att] =
			ExecEvalExprSwitchContext(dt->default_expr[i],
									  GetPerTupleExprContext(dt->estate),
									  &slot->tts_isnull[att]);
	}
	ExecStoreVirtualTuple(slot);
	check_not_null(dt->rel, slot);
	if (dt->user_checks)
		ExecConstraints(dt->rri, slot, dt->estate);
}

static void
direct_close(DirectTable *dt)
{
	if (dt->kept != NULL)
	{
		/* Kept for the transaction's next write (above) */
		ExecClearTuple(dt->slot);
		ResetPerTupleExprContext(dt->estate);
		dt->kept->in_use = false;
		return;
	}
	if (dt->rri != NULL)
	{
		ExecDropSingleTupleTableSlot(dt->slot);
		close_indexes_keep_locks(dt->rri);
		FreeExecutorState(dt->estate);
	}
	table_close(dt->rel, NoLock);
}

/*
 * Refuse a call that writes in a read-only transaction (every transaction of
 * a hot standby is one) with 25006, as the executor refuses a statement that
 * writes; called first by every SQL function that writes, so that it reads
 * and changes nothing.
 */
void
RequireWritableTransaction(const char *funcname)
{
	if (XactReadOnly)
		PreventCommandIfReadOnly(funcname);
}

/* The columns of durable.history, in the order of the arrays below */
static const DirectColumn history_columns[] = {
	{"run_id", UUIDOID}, {"event_id", INT8OID},
	{"event_time", TIMESTAMPTZOID}, {"event_type", TEXTOID},
	{"attributes", JSONBOID}
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
static const DirectColumn ready_columns[] = {
	{"namespace", TEXTOID}, {"task_queue", TEXTOID}, {"kind", CHAROID},
	{"task_id", INT8OID}, {"run_id", UUIDOID},
	{"scheduled_event_id", INT8OID}, {"attempt", INT4OID}
};
/* The claim order's columns of a task (0.9.0) */
static const DirectColumn ready_order_columns[] = {
	{"priority", INT2OID}, {"concurrency_key", TEXTOID}
};

/* durable.ready_task_seq, in the schema nsp (InvalidOid: none) */
static Oid
ready_task_seq(Oid nsp)
{
	Oid			seq = OidIsValid(nsp) ?
		get_relname_relid("ready_task_seq", nsp) : InvalidOid;

	if (!OidIsValid(seq))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("sequence durable.ready_task_seq does not exist"),
				 errhint("durable needs its tables as its extension script made them.")));
	return seq;
}

/*
 * Take a task id from the sequence for a task of a queue, and note it in
 * the claims' marks (claim_mark.c): those keep the walk of the tasks of
 * priority 3 and no key, and the executors' walk of their tasks of priority
 * 3 (has_order: the schema has priorities and keys, 0.9.0).
 */
static int64
take_task_id(Oid seq, const char *namespace, const char *task_queue,
			 char kind, int16 priority, const char *key, bool has_order)
{
	int64		task_id = nextval_internal(seq, false);

	if ((priority == 3 && key[0] == '\0') || !has_order)
		ClaimMarkNoteInsert(namespace, task_queue, kind, task_id);
	if ((kind == 'w' || kind == 'x') && (priority == 3 || !has_order))
		ClaimMarkNoteInsert(namespace, task_queue,
							CLAIM_MARK_EXECUTOR_KIND(kind), task_id);
	return task_id;
}

/* Keep a task in hand instead of writing it (store/kept_task.c). */
static void
keep_task(const char *namespace, pg_uuid_t *run_id, const char *task_queue,
		  char kind, int64 task_id, int64 scheduled, int32 attempt,
		  int16 priority, const char *key)
{
	KeptTask	k;

	k.run_id = *run_id;
	k.namespace = (char *) namespace;
	k.task_queue = (char *) task_queue;
	k.kind = kind;
	k.task_id = task_id;
	k.scheduled_event_id = scheduled;
	k.attempt = attempt;
	k.priority = priority;
	k.concurrency_key = (char *) key;
	KeptTaskKeep(&k);
}

/* durable.ready_tasks opened for inserting tasks, and a row's values */
typedef struct ReadyInsert
{
	DirectTable dt;
	int			att[lengthof(ready_columns)];
	int			c_priority;		/* -1 before 0.9.0 */
	int			c_key;
	Oid			seq;
	Datum		values[16];
	bool		isnull[16];
	Datum	   *vals;
	bool	   *nulls;
} ReadyInsert;

static void
ready_insert_open(ReadyInsert *ri, const char *namespace, pg_uuid_t *run_id)
{
	int			opt[lengthof(ready_order_columns)];
	int			i;

	direct_open_with(&ri->dt, "ready_tasks", lengthof(ready_columns),
					 ready_columns, ri->att, lengthof(ready_order_columns),
					 ready_order_columns, opt);
	ri->c_priority = opt[0];
	ri->c_key = opt[1];
	/* Stays while the table is locked: DROP EXTENSION would wait for us. */
	ri->seq = ready_task_seq(RelationGetNamespace(ri->dt.rel));
	ri->vals = ri->values;
	ri->nulls = ri->isnull;
	if (ri->dt.natts > lengthof(ri->values))
	{
		ri->vals = palloc(sizeof(Datum) * ri->dt.natts);
		ri->nulls = palloc(sizeof(bool) * ri->dt.natts);
	}
	memset(ri->nulls, true, sizeof(bool) * ri->dt.natts);
	for (i = 0; i < lengthof(ready_columns); i++)
		ri->nulls[ri->att[i]] = false;
	if (ri->c_priority >= 0)
		ri->nulls[ri->c_priority] = false;
	if (ri->c_key >= 0)
		ri->nulls[ri->c_key] = false;
	ri->vals[ri->att[0]] = CStringGetTextDatum(namespace);
	ri->vals[ri->att[4]] = UUIDPGetDatum(run_id);
}

static void
ready_insert_row(ReadyInsert *ri, const char *task_queue, char kind,
				 int64 task_id, int64 scheduled, int32 attempt,
				 int16 priority, const char *key)
{
	ri->vals[ri->att[1]] = CStringGetTextDatum(task_queue);
	ri->vals[ri->att[2]] = CharGetDatum(kind);
	ri->vals[ri->att[3]] = Int64GetDatum(task_id);
	ri->vals[ri->att[5]] = Int64GetDatum(scheduled);
	ri->vals[ri->att[6]] = Int32GetDatum(attempt);
	if (ri->c_priority >= 0)
		ri->vals[ri->c_priority] = Int16GetDatum(priority);
	if (ri->c_key >= 0)
		ri->vals[ri->c_key] = CStringGetTextDatum(key);
	direct_insert(&ri->dt, ri->vals, ri->nulls);
}

/*
 * Queue n tasks of a run; each takes its task_id from the column's sequence,
 * as the column default does.  priorities and keys (NULL: 3 and none for
 * all) are each task's priority and concurrency key ("" for none), written
 * where the schema has them (0.9.0).  The first executor task of priority 3
 * and no key of a chain's run is kept in hand instead of written
 * (store/kept_task.c): the table is opened only for a row to write.
 */
void
DirectInsertReadyTasks(const char *namespace, pg_uuid_t *run_id, int n,
					   char *const *queues, const char *kinds,
					   const int64 *scheduled, const int32 *attempts,
					   const int16 *priorities, char *const *keys)
{
	ReadyInsert ri;
	bool		opened = false;
	Oid			seq = InvalidOid;
	int			i;

	if (n == 0)
		return;
	/*
	 * The transaction has its id before it takes a task id: the claims' low-
	 * water marks rely on it (claim_mark.c).
	 */
	(void) GetCurrentTransactionId();
	for (i = 0; i < n; i++)
	{
		int16		priority = priorities != NULL ? priorities[i] : 3;
		const char *key = keys != NULL && keys[i] != NULL ? keys[i] : "";
		bool		keep = priority == 3 && key[0] == '\0' &&
			KeptTaskWanted(run_id, kinds[i]);
		int64		task_id;

		if (!keep && !opened)
		{
			ready_insert_open(&ri, namespace, run_id);
			opened = true;
			seq = ri.seq;
		}
		else if (!OidIsValid(seq))
		{
			/*
			 * Stays without the table open: the chain's claim locked
			 * durable.ready_tasks, so DROP EXTENSION waits for us.
			 */
			seq = ready_task_seq(get_namespace_oid("durable", true));
		}

		/*
		 * Whether the schema has priorities matters to the marks only for
		 * a task of another priority or a key, which is written: the table
		 * is open then.
		 */
		task_id = take_task_id(seq, namespace, queues[i], kinds[i], priority,
							   key, !opened || ri.c_priority >= 0);
		if (keep)
			keep_task(namespace, run_id, queues[i], kinds[i], task_id,
					  scheduled[i], attempts[i], priority, key);
		else
			ready_insert_row(&ri, queues[i], kinds[i], task_id, scheduled[i],
							 attempts[i], priority, key);
	}
	if (opened)
		direct_close(&ri.dt);
}

/*
 * Write the task a chain kept in hand, if any (store/kept_task.c), as it
 * would have been written when it was queued.
 */
void
DirectWriteKeptTask(void)
{
	KeptTask   *h = KeptTaskAny();
	ReadyInsert ri;

	if (h == NULL)
		return;
	ready_insert_open(&ri, h->namespace, &h->run_id);
	ready_insert_row(&ri, h->task_queue, h->kind, h->task_id,
					 h->scheduled_event_id, h->attempt, h->priority,
					 h->concurrency_key);
	direct_close(&ri.dt);
	KeptTaskForget();
}

/*
 * Read a run's history in event order, through the primary key of
 * durable.history.  Events this transaction wrote earlier are visible: the
 * scan runs under a copy of the transaction snapshot with the current
 * command id, as a statement of its own would.
 */
void
BeginHistoryScan(HistoryScan *hs, pg_uuid_t *run_id)
{
	BeginHistoryScanAfter(hs, run_id, 0);
}

/* The same, from the event after the event id after on. */
void
BeginHistoryScanAfter(HistoryScan *hs, pg_uuid_t *run_id, int64 after)
{
	ScanKeyData key[2];
	int			nkeys = 1;
	Oid			pkey;
	int			i;

	CommandCounterIncrement();
	PushCopiedSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	hs->rel = DurableOpenTable("history", AccessShareLock);
	pkey = primary_key(hs->rel);
	for (i = 0; i < lengthof(history_columns); i++)
		hs->att[i] = column_index_typed(hs->rel, history_columns[i].name,
										history_columns[i].type) + 1;
	ScanKeyInit(&key[0], hs->att[0], BTEqualStrategyNumber, F_UUID_EQ,
				UUIDPGetDatum(run_id));
	if (after > 0)
		ScanKeyInit(&key[nkeys++], hs->att[1], BTGreaterStrategyNumber,
					F_INT8GT, Int64GetDatum(after));
	hs->scan = systable_beginscan(hs->rel, pkey, true, GetActiveSnapshot(),
								  nkeys, key);
}

/*
 * The next event of the scan into *ev, copied into the current memory
 * context; false at the end.  The tuple lives in a buffer page that the next
 * systable_getnext may unpin, after which the page can be evicted and
 * reused: an inline (uncompressed, not toasted) jsonb read from it must be
 * copied, not pointed to.
 */
bool
HistoryScanNext(HistoryScan *hs, HistoryEvent *ev)
{
	TupleDesc	desc = RelationGetDescr(hs->rel);
	HeapTuple	tuple = systable_getnext(hs->scan);
	bool		isnull;
	Datum		d;

	if (!HeapTupleIsValid(tuple))
		return false;
	d = heap_getattr(tuple, hs->att[1], desc, &isnull);
	ev->event_id = isnull ? 0 : DatumGetInt64(d);
	d = heap_getattr(tuple, hs->att[2], desc, &isnull);
	ev->event_time = isnull ? 0 : DatumGetTimestampTz(d);
	d = heap_getattr(tuple, hs->att[3], desc, &isnull);
	ev->event_type = isnull ? pstrdup("") : TextDatumGetCString(d);
	d = heap_getattr(tuple, hs->att[4], desc, &isnull);
	ev->attributes = isnull ? NULL : DatumGetJsonbPCopy(d);
	return true;
}

void
EndHistoryScan(HistoryScan *hs)
{
	systable_endscan(hs->scan);
	table_close(hs->rel, NoLock);
	PopActiveSnapshot();
}

/*
 * Lock a row as SELECT ... FOR UPDATE does (the latest version of it, under
 * READ COMMITTED), with the errors FOR UPDATE raises: a row changed since a
 * REPEATABLE READ or SERIALIZABLE snapshot is a serialization failure.
 * Returns TM_Ok (the version locked is in slot), TM_WouldBlock (skipped),
 * TM_SelfModified (changed by this very command) or, under READ COMMITTED,
 * TM_Deleted (gone meanwhile).
 *
 * A version this transaction made (an insert or update of a subtransaction
 * not aborted, and not changed since) is held as a lock would hold it, and
 * is not locked again: no other transaction sees it, and one that would lock
 * or change the row waits on the version it replaced, or does not see the
 * row, until this transaction ends.  A lock would only write a WAL record,
 * and make the next change of the row (by another subtransaction than the
 * locker, as a chain's next task is) create a MultiXact.
 */
static TM_Result
lock_row(Relation rel, ItemPointer tid, Snapshot snapshot,
		 TupleTableSlot *slot, LockWaitPolicy wait, TM_FailureData *tmfd)
{
	TM_Result	res;

	if (wrote_table(rel) &&
		table_tuple_fetch_row_version(rel, tid, SnapshotSelf, slot))
	{
		HeapTuple	tuple = ExecFetchSlotHeapTuple(slot, false, NULL);
		TransactionId xmin = HeapTupleHeaderGetXmin(tuple->t_data);

		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			/* The latest version, where tid points: no update was followed */
			tmfd->ctid = *tid;
			tmfd->xmax = InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			tmfd->traversed = false;
			return TM_Ok;
		}
		ExecClearTuple(slot);
	}
	res = table_tuple_lock(rel, tid, snapshot, slot,
						   GetCurrentCommandId(false), LockTupleExclusive,
						   wait,
						   IsolationUsesXactSnapshot() ? 0 :
						   TUPLE_LOCK_FLAG_FIND_LAST_VERSION,
						   tmfd);
	switch (res)
	{
		case TM_Ok:
		case TM_WouldBlock:
		case TM_SelfModified:
			return res;
		case TM_Updated:
			if (IsolationUsesXactSnapshot())
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("could not serialize access due to concurrent update")));
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);
			break;
		case TM_Deleted:
			if (IsolationUsesXactSnapshot())
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("could not serialize access due to concurrent delete")));
			return res;
		case TM_Invisible:
			elog(ERROR, "attempted to lock invisible tuple");
			break;
		default:
			elog(ERROR, "unrecognized table_tuple_lock status: %u", res);
	}
	return res;
}

/*
 * Where the latest version of a run's row is, once this transaction locked
 * or wrote it: the next lock or update of that run in the transaction (a
 * chain's next task, a call's SaveRun) fetches it there instead of searching
 * the primary key.  The lock, held to the transaction's end, keeps any other
 * transaction from making a newer version; a subtransaction that aborts
 * takes back its versions (and its lock), so the place is forgotten then, as
 * at the transaction's end.  The row found there is checked all the same:
 * the latest version this transaction sees (SnapshotSelf), of that run.
 */
static struct
{
	bool		known;
	pg_uuid_t	run_id;
	ItemPointerData tid;
	SubTransactionId subid;		/* the subtransaction that made it known */
} run_row;
static bool run_row_callbacks = false;

static void
run_row_xact_callback(XactEvent event, void *arg)
{
	run_row.known = false;
}

static void
run_row_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && run_row.known &&
		run_row.subid >= mySubid)
		run_row.known = false;
}

static void
remember_run_row(pg_uuid_t *run_id, ItemPointer tid)
{
	if (!run_row_callbacks)
	{
		RegisterXactCallback(run_row_xact_callback, NULL);
		RegisterSubXactCallback(run_row_subxact_callback, NULL);
		run_row_callbacks = true;
	}
	run_row.known = true;
	run_row.run_id = *run_id;
	run_row.tid = *tid;
	run_row.subid = GetCurrentSubTransactionId();
}

/*
 * Whether the latest version of run_id's row is where remember_run_row saw
 * it (run_row.tid); with tuple, a copy of it goes to *tuple (the caller
 * frees it).  False when the place is not known or no longer holds it.
 * run_att: the 1-based column of run_id.
 */
static bool
fetch_known_run_row(Relation rel, pg_uuid_t *run_id, AttrNumber run_att,
					HeapTuple *tuple)
{
	HeapTupleData tup;
	Buffer		buffer;
	Datum		d;
	bool		isnull;
	bool		same;

	if (!run_row.known || memcmp(&run_row.run_id, run_id, UUID_LEN) != 0)
		return false;
	tup.t_self = run_row.tid;
	if (!heap_fetch(rel, SnapshotSelf, &tup, &buffer, false))
	{
		run_row.known = false;
		return false;
	}
	d = heap_getattr(&tup, run_att, RelationGetDescr(rel), &isnull);
	same = !isnull &&
		memcmp(DatumGetUUIDP(d), run_id, UUID_LEN) == 0;
	if (same && tuple != NULL)
		*tuple = heap_copytuple(&tup);
	ReleaseBuffer(buffer);
	if (!same)
		run_row.known = false;
	return same;
}

/*
 * Lock the row of durable.runs with this run_id as SELECT ... FOR UPDATE
 * [SKIP LOCKED] does, and return its latest version in a slot (the caller
 * drops it), or NULL when there is no such row or it was skipped.  Under
 * REPEATABLE READ and SERIALIZABLE a row changed since the transaction's
 * snapshot is a serialization failure, as it is for FOR UPDATE.
 */
TupleTableSlot *
DirectLockRun(pg_uuid_t *run_id, bool skip_locked)
{
	Relation	rel;
	ScanKeyData key;
	Snapshot	snapshot;
	ItemPointerData tid;
	AttrNumber	run_att;
	bool		found = false;
	TupleTableSlot *slot;
	TM_FailureData tmfd;
	TM_Result	res;

	/* What this call wrote so far is visible, as to an SPI statement. */
	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("runs", RowShareLock);
	/* FOR UPDATE is a write to a statement: refused in a read-only one. */
	if (XactReadOnly)
		PreventCommandIfReadOnly("a lock of a row of durable.runs");
	run_att = column_index_typed(rel, "run_id", UUIDOID) + 1;
	/* Locked already by this transaction: where it is known (above) */
	if (fetch_known_run_row(rel, run_id, run_att, NULL))
	{
		tid = run_row.tid;
		found = true;
	}
	else
	{
		ScanKeyInit(&key, run_att, BTEqualStrategyNumber, F_UUID_EQ,
					UUIDPGetDatum(run_id));
		found = primary_key_tid(rel, snapshot, 1, &key, &tid);
	}
	if (!found)
	{
		table_close(rel, NoLock);
		UnregisterSnapshot(snapshot);
		return NULL;
	}

	slot = table_slot_create(rel, NULL);
	res = lock_row(rel, &tid, snapshot, slot,
				   skip_locked ? LockWaitSkip : LockWaitBlock, &tmfd);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	if (res == TM_Ok)
	{
		remember_run_row(run_id, &slot->tts_tid);
		return slot;
	}
	/* skipped, changed by this very command (as ExecLockRows), or gone */
	ExecDropSingleTupleTableSlot(slot);
	return NULL;
}

/*
 * The row of durable.runs with this run_id as a fresh snapshot of this
 * transaction sees it, unlocked, in a slot (the caller drops it), or NULL
 * when there is none: a read that writes nothing, where DirectLockRun's lock
 * would give the transaction an xid and its commit a flush.
 */
TupleTableSlot *
DirectFetchRun(pg_uuid_t *run_id)
{
	Relation	rel;
	ScanKeyData key;
	Snapshot	snapshot;
	ItemPointerData tid;
	TupleTableSlot *slot = NULL;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("runs", AccessShareLock);
	ScanKeyInit(&key, column_index_typed(rel, "run_id", UUIDOID) + 1,
				BTEqualStrategyNumber, F_UUID_EQ, UUIDPGetDatum(run_id));
	if (primary_key_tid(rel, snapshot, 1, &key, &tid))
	{
		slot = table_slot_create(rel, NULL);
		if (!table_tuple_fetch_row_version(rel, &tid, snapshot, slot))
		{
			ExecDropSingleTupleTableSlot(slot);
			slot = NULL;
		}
	}
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return slot;
}

/* The columns of durable.runs that DirectUpdateRun writes, and their types */
static const DirectColumn run_columns[] = {
	{"cancel_requested", BOOLOID}, {"last_event_id", INT8OID},
	{"decision_scheduled_id", INT8OID}, {"decision_started_id", INT8OID},
	{"decision_attempt", INT4OID}, {"decision_started_time", TIMESTAMPTZOID},
	{"previous_started_id", INT8OID}, {"activity_attempts", INT4OID},
	{"has_buffered", BOOLOID}, {"status", TEXTOID},
	{"close_time", TIMESTAMPTZOID}, {"result", JSONBOID},
	{"failure", JSONBOID}, {"task_secret", INT8OID},
	{"paused_at", TIMESTAMPTZOID}, {"paused_by", TEXTOID},
	{"pause_reason", TEXTOID}
};

/* The columns of durable.runs a new run's row is inserted with */
static const DirectColumn run_insert_columns[] = {
	{"run_id", UUIDOID}, {"run_seq", INT8OID}, {"namespace", TEXTOID},
	{"workflow_id", TEXTOID}, {"workflow_type", TEXTOID},
	{"task_queue", TEXTOID}, {"status", TEXTOID}, {"attempt", INT4OID},
	{"first_run_id", UUIDOID}, {"chain_start_time", TIMESTAMPTZOID},
	{"start_time", TIMESTAMPTZOID}, {"retry_policy", JSONBOID},
	{"execution_timeout", FLOAT8OID}, {"run_timeout", FLOAT8OID},
	{"decision_timeout", FLOAT8OID}, {"execution_deadline", TIMESTAMPTZOID},
	{"cron_schedule", TEXTOID}, {"memo", JSONBOID},
	{"last_event_id", INT8OID}, {"decision_scheduled_id", INT8OID},
	{"decision_attempt", INT4OID}, {"parent_namespace", TEXTOID},
	{"parent_workflow_id", TEXTOID}, {"parent_run_id", UUIDOID},
	{"parent_initiated_id", INT8OID}, {"continued_from", UUIDOID},
	{"priority", INT2OID}, {"concurrency_key", TEXTOID},
	{"cancel_requested", BOOLOID}, {"decision_started_id", INT8OID},
	{"previous_started_id", INT8OID}, {"activity_attempts", INT4OID},
	{"has_buffered", BOOLOID}
};

/*
 * Under REPEATABLE READ and SERIALIZABLE, the row that made an ON CONFLICT
 * DO NOTHING do nothing must be visible to the transaction's snapshot, else
 * the insert is a serialization failure, as the executor has it
 * (nodeModifyTable.c).
 */
static void
check_conflict_visible(Relation rel, ItemPointer tid)
{
	TupleTableSlot *slot;
	bool		isnull;
	TransactionId xmin;

	if (!IsolationUsesXactSnapshot())
		return;
	slot = table_slot_create(rel, NULL);
	if (!table_tuple_fetch_row_version(rel, tid, SnapshotAny, slot))
		elog(ERROR, "failed to fetch conflicting tuple for ON CONFLICT");
	if (!table_tuple_satisfies_snapshot(rel, slot, GetTransactionSnapshot()))
	{
		xmin = DatumGetTransactionId(slot_getsysattr(slot,
													 MinTransactionIdAttributeNumber,
													 &isnull));
		if (!TransactionIdIsCurrentTransactionId(xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to concurrent update")));
	}
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * Insert a new run's row (columns by name, of run_insert_columns; run_seq
 * is drawn here) as
 *   INSERT INTO durable.runs (...) VALUES (..., nextval('durable.run_seq'), ...)
 *   ON CONFLICT ON <arbiter> DO NOTHING
 * does, arbiter being the unique index that allows one running run a
 * workflow id: false, writing nothing, when that index has the row's key
 * already.  As the executor does it, the row is inserted speculatively: a
 * conflicting insert in progress is waited for, and an insert that races
 * with another is undone and tried again, so that of two starts at once
 * exactly one inserts and the other does nothing.  Other columns get their
 * defaults, as an INSERT would give them.  none_seen: the caller has just
 * found no row of the key (DirectWorkflowHasRuns), so the first try inserts
 * without looking at the arbiter first; an insert that raced with it is
 * found while the entries are made, undone, and the next try looks, as
 * above.
 */
bool
DirectInsertRun(int n, const char *const *names, const Datum *values,
				const bool *isnull, const char *arbiter, bool none_seen)
{
	DirectTable dt;
	DirectColumn cols[lengthof(run_insert_columns)];
	int			att[lengthof(run_insert_columns)];
	Datum	   *vals;
	bool	   *nulls;
	Oid			seq;
	Oid			arbiter_oid;
	List	   *arbiters;
	TupleTableSlot *slot;
	bool		inserted = false;
	int			next = 0;
	int			i;

	Assert(n < lengthof(run_insert_columns));
	for (i = 0; i < n; i++)
	{
		int			k;

		/* names come mostly in the order of run_insert_columns */
		for (k = 0; k < lengthof(run_insert_columns); k++)
		{
			if (strcmp(run_insert_columns[next].name, names[i]) == 0)
				break;
			next = (next + 1) % lengthof(run_insert_columns);
		}
		if (k == lengthof(run_insert_columns))
			elog(ERROR, "durable.runs.%s is not a column DirectInsertRun knows",
				 names[i]);
		cols[i] = run_insert_columns[next];
		next = (next + 1) % lengthof(run_insert_columns);
	}
	cols[n].name = "run_seq";
	cols[n].type = INT8OID;
	direct_open_with(&dt, "runs", n + 1, cols, att, 0, NULL, NULL);
	seq = get_relname_relid("run_seq", RelationGetNamespace(dt.rel));
	if (!OidIsValid(seq))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("durable.run_seq does not exist"),
				 errhint("durable needs its tables as its extension script made them.")));
	/* The arbiter (an index of the table, so in its schema) */
	for (i = 0; i < dt.rri->ri_NumIndices; i++)
		if (strcmp(RelationGetRelationName(dt.rri->ri_IndexRelationDescs[i]),
				   arbiter) == 0)
			break;
	if (i == dt.rri->ri_NumIndices)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("durable.%s does not exist", arbiter),
				 errhint("durable needs its tables as its extension script made them.")));
	arbiter_oid = RelationGetRelid(dt.rri->ri_IndexRelationDescs[i]);
	/* The arbiter's entries are checked before the row is written */
	if (!dt.rri->ri_IndexRelationInfo[i]->ii_Unique)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("durable.%s is not a unique index of durable.runs",
						arbiter),
				 errhint("durable needs its tables as its extension script made them.")));
	/* Made once for a table kept open, with its IndexInfo (above) */
	if (dt.rri->ri_IndexRelationInfo[i]->ii_UniqueOps == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(dt.estate->es_query_cxt);

		BuildSpeculativeIndexInfo(dt.rri->ri_IndexRelationDescs[i],
								  dt.rri->ri_IndexRelationInfo[i]);
		MemoryContextSwitchTo(oldcxt);
	}
	arbiters = list_make1_oid(arbiter_oid);

	vals = palloc0(sizeof(Datum) * dt.natts);
	nulls = palloc(sizeof(bool) * dt.natts);
	memset(nulls, true, sizeof(bool) * dt.natts);
	for (i = 0; i < n; i++)
	{
		vals[att[i]] = values[i];
		nulls[att[i]] = isnull[i];
	}
	vals[att[n]] = Int64GetDatum(nextval_internal(seq, false));
	nulls[att[n]] = false;

	direct_fill_slot(&dt, vals, nulls);
	slot = dt.slot;

	for (;;)
	{
		ItemPointerData conflict;
		uint32		token;
		bool		spec_conflict = false;
		List	   *recheck;

		if (!none_seen &&
			!ExecCheckIndexConstraints(dt.rri, slot, dt.estate, &conflict,
									   arbiters))
		{
			check_conflict_visible(dt.rel, &conflict);
			break;				/* DO NOTHING */
		}
		none_seen = false;
		token = SpeculativeInsertionLockAcquire(GetCurrentTransactionId());
		table_tuple_insert_speculative(dt.rel, slot, dt.cid, 0, NULL, token);
		note_written(dt.rel);
		recheck = ExecInsertIndexTuples(dt.rri, slot, dt.estate, false, true,
										&spec_conflict, arbiters);
		table_tuple_complete_speculative(dt.rel, slot, token, !spec_conflict);
		SpeculativeInsertionLockRelease(GetCurrentTransactionId());
		list_free(recheck);
		if (!spec_conflict)
		{
			inserted = true;
			break;
		}
		/* Another insert got there meanwhile: look again. */
	}
	ResetPerTupleExprContext(dt.estate);
	direct_close(&dt);
	return inserted;
}

/*
 * Make the index entries of a new version of a row that simple_heap_update
 * did not make HOT, as an UPDATE does (partial index predicates and unique
 * checks included).
 */
static void
index_new_version(DirectTable *dt, HeapTuple newtup)
{
	TupleTableSlot *slot;
	List	   *recheck;

	if (HeapTupleIsHeapOnly(newtup))
		return;
	if (dt->kept != NULL)
		open_table_indexes(dt->kept);
	else if (dt->rri == NULL)
	{
		open_table_state(dt);
		OpenIndicesKeptInfo(dt->rri);
	}
	slot = dt->slot;
	ExecForceStoreHeapTuple(newtup, slot, false);
	slot->tts_tid = newtup->t_self;
	/* a fresh slot names no table; ExecInsertIndexTuples asserts it does */
	slot->tts_tableOid = RelationGetRelid(dt->rel);
	recheck = ExecInsertIndexTuples(dt->rri, slot, dt->estate, false, false,
									NULL, NIL);
	list_free(recheck);
	ExecClearTuple(slot);
	ResetPerTupleExprContext(dt->estate);
}

/* The type of column name among cols (n of them) of durable.relname */
static Oid
known_column_type(const DirectColumn *cols, int n, const char *name,
				  const char *relname)
{
	for (int i = 0; i < n; i++)
		if (strcmp(cols[i].name, name) == 0)
			return cols[i].type;
	elog(ERROR, "durable.%s.%s is not a column the engine updates directly",
		 relname, name);
	return InvalidOid;			/* keep compiler quiet */
}

/*
 * Update columns (names, of known) of the row of rel that its primary key's
 * keys find, a row this transaction holds locked, as an UPDATE of those
 * columns does: the schema's CHECK constraints are not evaluated (callers
 * write values they allow), a user's are (direct_check_table).  When no
 * indexed column changes the update is HOT unless the page is full;
 * otherwise the new version's index entries are made as an UPDATE's are
 * (partial index predicates and unique checks included).  Returns false,
 * changing nothing, when there is no such row.
 */
static bool
update_row(DirectTable *dt, int nkeys, ScanKey keys, HeapTuple oldtup, int n,
		   const char *const *names, const DirectColumn *known, int nknown,
		   const Datum *values, const bool *isnull, ItemPointer updated)
{
	Relation	rel = dt->rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	HeapTuple	newtup;
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *repl;
	bool	   *repl_null;
	bool	   *replace;

	CheckCmdReplicaIdentity(rel, CMD_UPDATE);
	/* Our own earlier changes to the row are the version to update. */
	if (oldtup == NULL)
	{
		scan = systable_beginscan(rel, primary_key(rel), true, SnapshotSelf,
								  nkeys, keys);
		if (HeapTupleIsValid(tuple = systable_getnext(scan)))
			oldtup = heap_copytuple(tuple);
		systable_endscan(scan);
	}
	if (oldtup == NULL)
		return false;

	repl = palloc0(sizeof(Datum) * desc->natts);
	repl_null = palloc0(sizeof(bool) * desc->natts);
	replace = palloc0(sizeof(bool) * desc->natts);
	for (int i = 0; i < n; i++)
	{
		Oid			type = known_column_type(known, nknown, names[i],
											 RelationGetRelationName(rel));
		int			att = column_index_typed(rel, names[i], type);

		repl[att] = values[i];
		repl_null[att] = isnull[i];
		replace[att] = true;
	}
	newtup = heap_modify_tuple(oldtup, desc, repl, repl_null, replace);
	check_new_row(rel, newtup, replace, repl_null, dt->user_checks);
	simple_heap_update(rel, &oldtup->t_self, newtup);
	note_written(rel);
	*updated = newtup->t_self;
	index_new_version(dt, newtup);
	heap_freetuple(newtup);
	heap_freetuple(oldtup);
	return true;
}

/*
 * Update columns of a run's row, which this transaction holds locked, as an
 * UPDATE of those columns does (update_row): the callers write counters and
 * flags, or (CloseRun) a status the schema's CHECK constraint allows.
 */
void
DirectUpdateRun(pg_uuid_t *run_id, int n, const char *const *names,
				const Datum *values, const bool *isnull)
{
	DirectTable dt;
	ScanKeyData key;
	AttrNumber	run_att;
	HeapTuple	known = NULL;
	ItemPointerData updated;

	CommandCounterIncrement();
	direct_open_table(&dt, "runs", false);
	run_att = column_index_typed(dt.rel, "run_id", UUIDOID) + 1;
	ScanKeyInit(&key, run_att, BTEqualStrategyNumber, F_UUID_EQ,
				UUIDPGetDatum(run_id));
	(void) fetch_known_run_row(dt.rel, run_id, run_att, &known);
	if (!update_row(&dt, 1, &key, known, n, names, run_columns,
					lengthof(run_columns), values, isnull, &updated))
		elog(ERROR, "run %s vanished while locked", UuidToCString(run_id));
	remember_run_row(run_id, &updated);
	direct_close(&dt);
}

/*
 * The 1-based column of index that holds heap column att (0-based), or 0.
 */
static int
index_column_of(Relation index, int att)
{
	int			i;

	for (i = 0; i < index->rd_index->indnkeyatts; i++)
		if (index->rd_index->indkey.values[i] == att + 1)
			return i + 1;
	return 0;
}

/*
 * A walk of a queue's ready tasks in the primary key's order, claiming the
 * first one it can (DirectClaimReadyTask).
 */
typedef struct ClaimWalk
{
	Relation	rel;
	Relation	index;
	Snapshot	snapshot;
	TupleTableSlot *slot;
	TupleTableSlot *fetched;
	const char *namespace;
	const char *task_queue;
	char		kind;
	bool		ordered;		/* the key has priority and concurrency_key */
	text	   *ns_text;
	text	   *queue_text;
	Oid			ns_collation;
	Oid			queue_collation;
	Oid			key_collation;
	int			c_ns;
	int			c_queue;
	int			c_kind;
	int			c_run;
	int			c_sched;
	int			c_attempt;
	int			c_priority;
	int			c_key;
	int			c_id;
	int			c_not_before;	/* -1: none (before 0.3.0) */
	int			i_id;			/* 1-based columns of the index */
	int			i_key;
	const ClaimKeyPolicy *policy;
	ClaimedTask *task;
} ClaimWalk;

/* The scan keys of the queue and kind, and of a priority if > 0 */
static int
walk_keys(ClaimWalk *w, ScanKey keys, int priority, StrategyNumber strategy)
{
	int			n = 0;

	/* Text keys compare in the columns' collation, as the index does. */
	ScanKeyEntryInitialize(&keys[n++], 0, 1, BTEqualStrategyNumber,
						   InvalidOid, w->ns_collation, F_TEXTEQ,
						   PointerGetDatum(w->ns_text));
	ScanKeyEntryInitialize(&keys[n++], 0, 2, BTEqualStrategyNumber,
						   InvalidOid, w->queue_collation, F_TEXTEQ,
						   PointerGetDatum(w->queue_text));
	ScanKeyEntryInitialize(&keys[n++], 0, 3, BTEqualStrategyNumber,
						   InvalidOid, InvalidOid, F_CHAREQ,
						   CharGetDatum(w->kind));
	if (priority > 0)
		ScanKeyEntryInitialize(&keys[n++], 0, 4, strategy, InvalidOid,
							   InvalidOid,
							   strategy == BTEqualStrategyNumber ? F_INT2EQ :
							   strategy == BTLessStrategyNumber ? F_INT2LT :
							   F_INT2GT,
							   Int16GetDatum((int16) priority));
	return n;
}

/*
 * Claim the first task of the walk's range that is visible, not locked by
 * another claimer, and whose concurrency key the policy admits, as
 *   DELETE FROM durable.ready_tasks WHERE ctid = (SELECT ctid ... ORDER BY
 *   <the primary key> LIMIT 1 FOR UPDATE SKIP LOCKED)
 * does: a task changed since the snapshot is rechecked in its latest
 * version, and the one claimed is deleted.  The range is a priority's tasks
 * (priority 0: the queue's, before 0.9.0) of one key (key_eq), or of the
 * keys after key_after (NULL: from the first) up to key_upto (NULL: to the
 * last).  A key the policy refuses is passed over whole: the walk goes on
 * after it.
 *
 * The walk of the tasks without a key and of priority 3 (and of the queue's
 * before 0.9.0), the only ones most queues have, starts at the queue's
 * low-water mark (claim_mark.c), not at the start: while the vacuum horizon
 * is held, the entries of the tasks claimed since then stay in the index,
 * and walking them on every claim is what made a queue crawl.  The walk
 * reports each entry it passes (its task id from the index tuple, and
 * whether the snapshot sees its row) so that the mark can move on.
 */
static bool
claim_walk(ClaimWalk *w, int priority, const char *key_eq,
		   const char *key_after, const char *key_upto)
{
	ScanKeyData keys[10];
	int			nbase;
	bool		marked;
	bool		claimed = false;
	char	   *after = key_after != NULL ? pstrdup(key_after) : NULL;

	marked = !w->ordered ||
		(priority == 3 && key_eq != NULL && key_eq[0] == '\0');
	nbase = walk_keys(w, keys, w->ordered ? priority : 0,
					  BTEqualStrategyNumber);
	for (;;)
	{
		IndexScanDesc scan;
		ClaimMark	cm;
		int			nkeys = nbase;
		char	   *refused = NULL;
		char	   *admitted = NULL;
		ClaimWindow window = {0};

		if (key_eq != NULL)
			ScanKeyEntryInitialize(&keys[nkeys++], 0, 5, BTEqualStrategyNumber,
								   InvalidOid, w->key_collation, F_TEXTEQ,
								   CStringGetTextDatum(key_eq));
		if (after != NULL)
			ScanKeyEntryInitialize(&keys[nkeys++], 0, 5,
								   BTGreaterStrategyNumber, InvalidOid,
								   w->key_collation, F_TEXT_GT,
								   CStringGetTextDatum(after));
		if (key_upto != NULL)
			ScanKeyEntryInitialize(&keys[nkeys++], 0, 5,
								   BTLessEqualStrategyNumber, InvalidOid,
								   w->key_collation, F_TEXT_LE,
								   CStringGetTextDatum(key_upto));
		if (marked)
		{
			int64		start = ClaimMarkBegin(&cm, w->rel, w->namespace,
											   w->task_queue, w->kind,
											   w->snapshot);

			/* Every column before the task id is compared for equality */
			if (start > 0)
				ClaimWindowKeys(&window, keys, &nkeys, w->i_id, start);
		}
		scan = index_beginscan(w->rel, w->index, w->snapshot, nkeys, 0);
		scan->xs_want_itup = true;	/* the task id and key of each entry */
		index_rescan(scan, keys, nkeys, NULL, 0);
		while (!claimed && refused == NULL)
		{
			ItemPointer itid = index_getnext_tid(scan, ForwardScanDirection);
			ItemPointerData tid;
			TM_FailureData tmfd;
			TM_Result	res;
			bool		isnull;
			int64		task_id;
			bool		visible;

			if (itid == NULL)
			{
				if (ClaimWindowWiden(&window, scan, keys, nkeys))
					continue;
				break;
			}
			task_id = DatumGetInt64(index_getattr(scan->xs_itup, w->i_id,
												  scan->xs_itupdesc, &isnull));
			visible = index_fetch_heap(scan, w->fetched);
			if (marked)
				ClaimMarkSaw(&cm, task_id, visible);
			if (!visible)
				continue;		/* claimed, or not committed, for this snapshot */
			/* A key the policy refuses is passed over, all its tasks. */
			if (w->ordered && w->policy != NULL)
			{
				char	   *key = TextDatumGetCString(index_getattr(scan->xs_itup,
																	w->i_key,
																	scan->xs_itupdesc,
																	&isnull));

				if (key[0] != '\0' &&
					(admitted == NULL || strcmp(key, admitted) != 0))
				{
					if (!w->policy->admit(key, w->policy->arg))
					{
						refused = key;
						break;
					}
					admitted = key;
				}
			}
			/*
			 * An executor task put off after an engine failure waits for its
			 * timer (sqlwf/executor.c): not claimable, and not locked either,
			 * so that the timer that brings it back never waits for a claim.
			 */
			if (w->c_not_before >= 0)
			{
				(void) slot_getattr(w->fetched, w->c_not_before + 1, &isnull);
				if (!isnull)
					continue;
			}
			tid = w->fetched->tts_tid;
			res = lock_row(w->rel, &tid, w->snapshot, w->slot, LockWaitSkip,
						   &tmfd);
			if (res != TM_Ok)
				continue;		/* locked by another, or gone meanwhile */
			/* A newer version must still be a task of this queue and kind. */
			slot_getallattrs(w->slot);
			if (tmfd.traversed &&
				(DatumGetChar(w->slot->tts_values[w->c_kind]) != w->kind ||
				 strcmp(TextDatumGetCString(w->slot->tts_values[w->c_ns]),
						w->namespace) != 0 ||
				 strcmp(TextDatumGetCString(w->slot->tts_values[w->c_queue]),
						w->task_queue) != 0))
				continue;
			/* ... and still not put off */
			if (w->c_not_before >= 0 &&
				!w->slot->tts_isnull[w->c_not_before])
				continue;
			memcpy(&w->task->run_id,
				   DatumGetUUIDP(w->slot->tts_values[w->c_run]),
				   sizeof(pg_uuid_t));
			w->task->scheduled_event_id =
				DatumGetInt64(w->slot->tts_values[w->c_sched]);
			w->task->attempt = DatumGetInt32(w->slot->tts_values[w->c_attempt]);
			w->task->task_id = DatumGetInt64(w->slot->tts_values[w->c_id]);
			w->task->priority = w->ordered ?
				DatumGetInt16(w->slot->tts_values[w->c_priority]) : 3;
			if (w->ordered)
				text_to_cstring_buffer(DatumGetTextPP(w->slot->tts_values[w->c_key]),
									   w->task->concurrency_key,
									   CLAIM_KEY_MAX);
			else
				w->task->concurrency_key[0] = '\0';
			simple_heap_delete(w->rel, &w->slot->tts_tid);
			claimed = true;
		}
		index_endscan(scan);
		if (marked)
			ClaimMarkEnd(&cm);
		if (claimed || refused == NULL || key_eq != NULL)
			break;
		/* Go on after the key refused. */
		after = refused;
	}
	return claimed;
}

/*
 * The lowest priority the index has an entry of, below (strategy
 * BTLessStrategyNumber) or above (BTGreaterStrategyNumber) 3; 0 for none.
 * The entry may be of a task claimed or not committed: it only tells the
 * claim where to look.
 */
static int
first_priority(ClaimWalk *w, StrategyNumber strategy)
{
	ScanKeyData keys[4];
	int			nkeys = walk_keys(w, keys, 3, strategy);
	IndexScanDesc scan;
	int			priority = 0;

	scan = index_beginscan(w->rel, w->index, w->snapshot, nkeys, 0);
	scan->xs_want_itup = true;
	index_rescan(scan, keys, nkeys, NULL, 0);
	if (index_getnext_tid(scan, ForwardScanDirection) != NULL)
	{
		bool		isnull;

		priority = DatumGetInt16(index_getattr(scan->xs_itup, 4,
											   scan->xs_itupdesc, &isnull));
	}
	index_endscan(scan);
	return priority;
}

/* A key's tasks in a row in the round robin: its weight. */
static int32
key_weight(ClaimWalk *w, const char *key)
{
	if (key[0] == '\0' || w->policy == NULL || w->policy->weight == NULL)
		return 1;
	return w->policy->weight(key, w->policy->arg);
}

/*
 * Claim a task of one priority: the round robin of its keys
 * (claim_order.c).  The key served last keeps its turn while it has had
 * fewer tasks in a row than its weight; then the keys after it, then from
 * the first key (the tasks without one come first) round to it.
 */
static bool
claim_round(ClaimWalk *w, int priority)
{
	char		cursor[CLAIM_KEY_MAX];
	int32		served;
	const char *key = w->task->concurrency_key;

	if (!ClaimOrderGet(w->namespace, w->task_queue, w->kind, priority,
					   cursor, &served))
	{
		if (claim_walk(w, priority, "", NULL, NULL) ||
			claim_walk(w, priority, NULL, "", NULL))
		{
			ClaimOrderServed(w->namespace, w->task_queue, w->kind, priority,
							 key, 1);
			return true;
		}
		return false;
	}
	if (served < key_weight(w, cursor) &&
		claim_walk(w, priority, cursor, NULL, NULL))
	{
		ClaimOrderServed(w->namespace, w->task_queue, w->kind, priority,
						 key, served + 1);
		return true;
	}
	if (claim_walk(w, priority, NULL, cursor, NULL) ||
		(cursor[0] != '\0' &&
		 (claim_walk(w, priority, "", NULL, NULL) ||
		  claim_walk(w, priority, NULL, "", cursor))) ||
		(cursor[0] == '\0' && served >= 1 &&
		 claim_walk(w, priority, "", NULL, NULL)))
	{
		/* A new turn, of the next key or, round again, of the same. */
		ClaimOrderServed(w->namespace, w->task_queue, w->kind, priority,
						 key, 1);
		return true;
	}
	ClaimOrderForget(w->namespace, w->task_queue, w->kind, priority);
	return false;
}

/*
 * Claim the next ready task of a queue and kind, in the claim order: the
 * lowest priority first; within a priority, round the concurrency keys
 * (claim_round); within a key, the oldest task.  policy (NULL: none) says
 * whether a key's limits admit one more start, and its weight; the tasks
 * without a key are only bound by the queue's limits, decided before.
 * Returns false when there is none the claim may take.
 *
 * A database not yet updated to 0.9.0 has neither priorities nor keys: its
 * tasks are claimed oldest first.
 */
bool
DirectClaimReadyTask(const char *namespace, const char *task_queue, char kind,
					 const ClaimKeyPolicy *policy, ClaimedTask *task)
{
	ClaimWalk	w;
	TupleDesc	desc;
	bool		claimed = false;
	int			priority;

	CommandCounterIncrement();
	w.snapshot = RegisterSnapshot(GetTransactionSnapshot());
	/* A paused queue hands nothing out (queue_pause.c): same snapshot. */
	if (TaskQueuePaused(namespace, task_queue, w.snapshot))
	{
		UnregisterSnapshot(w.snapshot);
		return false;
	}
	w.rel = DurableOpenTable("ready_tasks", RowExclusiveLock);
	(void) direct_check_table(w.rel);	/* a DELETE checks no constraint */
	CheckCmdReplicaIdentity(w.rel, CMD_DELETE);
	desc = RelationGetDescr(w.rel);
	w.index = index_open(primary_key(w.rel), AccessShareLock);
	w.namespace = namespace;
	w.task_queue = task_queue;
	w.kind = kind;
	w.policy = policy;
	w.task = task;
	w.ns_text = cstring_to_text(namespace);
	w.queue_text = cstring_to_text(task_queue);
	w.c_ns = column_index_typed(w.rel, "namespace", TEXTOID);
	w.c_queue = column_index_typed(w.rel, "task_queue", TEXTOID);
	w.c_kind = column_index_typed(w.rel, "kind", CHAROID);
	w.c_run = column_index_typed(w.rel, "run_id", UUIDOID);
	w.c_sched = column_index_typed(w.rel, "scheduled_event_id", INT8OID);
	w.c_attempt = column_index_typed(w.rel, "attempt", INT4OID);
	w.c_priority = column_index_optional(w.rel, "priority", INT2OID);
	w.c_key = column_index_optional(w.rel, "concurrency_key", TEXTOID);
	w.c_id = column_index_typed(w.rel, "task_id", INT8OID);
	w.c_not_before = column_index_optional(w.rel, "not_before", TIMESTAMPTZOID);
	w.ns_collation = TupleDescAttr(desc, w.c_ns)->attcollation;
	w.queue_collation = TupleDescAttr(desc, w.c_queue)->attcollation;
	w.ordered = (w.c_priority >= 0 && w.c_key >= 0 &&
				 index_column_of(w.index, w.c_priority) == 4 &&
				 index_column_of(w.index, w.c_key) == 5);
	w.key_collation = w.ordered ?
		TupleDescAttr(desc, w.c_key)->attcollation : InvalidOid;
	w.i_id = index_column_of(w.index, w.c_id);
	w.i_key = 5;
	if (index_column_of(w.index, w.c_ns) != 1 ||
		index_column_of(w.index, w.c_queue) != 2 ||
		index_column_of(w.index, w.c_kind) != 3 ||
		w.i_id != (w.ordered ? 6 : 4))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the primary key of durable.ready_tasks is not (namespace, task_queue, kind, priority, concurrency_key, task_id)"),
				 errhint("durable needs its tables as its extension script made them.")));
	w.slot = table_slot_create(w.rel, NULL);
	w.fetched = table_slot_create(w.rel, NULL);

	if (!w.ordered)
		claimed = claim_walk(&w, 0, NULL, NULL, NULL);
	else
	{
		/* Priorities 1 and 2, if the queue has any; 3; then 4 and 5. */
		priority = first_priority(&w, BTLessStrategyNumber);
		for (; priority > 0 && priority < 3 && !claimed; priority++)
			claimed = claim_round(&w, priority);
		if (!claimed)
			claimed = claim_round(&w, 3);
		if (!claimed)
		{
			priority = first_priority(&w, BTGreaterStrategyNumber);
			for (; priority > 3 && priority <= 5 && !claimed; priority++)
				claimed = claim_round(&w, priority);
		}
	}

	ExecDropSingleTupleTableSlot(w.fetched);
	ExecDropSingleTupleTableSlot(w.slot);
	index_close(w.index, NoLock);
	table_close(w.rel, NoLock);
	UnregisterSnapshot(w.snapshot);
	return claimed;
}

/* A task of the run seen by DirectClaimRunTask's snapshot */
typedef struct RunTaskEntry
{
	int64		task_id;
	ItemPointerData tid;
	char	   *namespace;
	char	   *task_queue;
	char		kind;
	bool		paused;			/* its queue is paused */
	bool		limited;		/* its queue and kind have limits */
} RunTaskEntry;

static int
run_task_cmp(const void *a, const void *b)
{
	int64		x = ((const RunTaskEntry *) a)->task_id;
	int64		y = ((const RunTaskEntry *) b)->task_id;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* The columns of durable.ready_tasks a run's claim reads */
typedef struct RunTaskColumns
{
	int			c_ns;
	int			c_queue;
	int			c_kind;
	int			c_run;
	int			c_sched;
	int			c_attempt;
	int			c_id;
	int			c_priority;		/* -1: none (before 0.9.0) */
	int			c_key;			/* -1: none (before 0.9.0) */
	int			c_not_before;	/* -1: none (before 0.3.0) */
} RunTaskColumns;

/* Whether a version of a task's row is an executor task of run, not put off */
static bool
run_task_qualifies(const RunTaskColumns *c, TupleTableSlot *slot,
				   pg_uuid_t *run_id)
{
	char		kind;

	slot_getallattrs(slot);
	kind = DatumGetChar(slot->tts_values[c->c_kind]);
	return (kind == 'w' || kind == 'x') &&
		(c->c_not_before < 0 || slot->tts_isnull[c->c_not_before]) &&
		memcmp(DatumGetUUIDP(slot->tts_values[c->c_run]), run_id,
			   sizeof(pg_uuid_t)) == 0;
}

/*
 * Hand the task a chain kept in hand (store/kept_task.c) to its claim, as
 * DirectClaimRunTask would a row of it.
 */
static void
take_kept_task(pg_uuid_t *run_id, RunTask *task)
{
	KeptTask   *kept = KeptTaskOfRun(run_id);

	memset(task, 0, sizeof(*task));
	task->claimed.run_id = *run_id;
	task->claimed.scheduled_event_id = kept->scheduled_event_id;
	task->claimed.attempt = kept->attempt;
	task->claimed.task_id = kept->task_id;
	task->claimed.priority = kept->priority;
	strlcpy(task->claimed.concurrency_key, kept->concurrency_key,
			CLAIM_KEY_MAX);
	task->namespace = pstrdup(kept->namespace);
	task->task_queue = pstrdup(kept->task_queue);
	task->kind = kept->kind;
	ItemPointerSetInvalid(&task->tid);
	KeptTaskForget();
}

/*
 * Claim the next executor task of one run for a chain (sqlwf/executor.c),
 * as
 *   DELETE FROM durable.ready_tasks WHERE ctid = (SELECT ctid FROM
 *     durable.ready_tasks WHERE run_id = $1 AND kind IN ('w', 'x')
 *     AND not_before IS NULL AND <its queue not paused>
 *     AND NOT <limited(its queue, kind)>
 *     ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED)
 * does, through ready_tasks_by_run (a run has few tasks): a task changed
 * since the snapshot is rechecked in its latest version.  Returns 1 with
 * the task claimed (deleted) in *task; 0 when the run has none free; -1
 * when its first free task is of a queue that limited() says has limits
 * (NULL: none has): that task is locked, not deleted, for the caller to
 * pass through the limits and then delete (DirectDeleteHeldTask) or leave.
 */
int
DirectClaimRunTask(pg_uuid_t *run_id, RunTaskLimited limited, RunTask *task)
{
	Relation	rel;
	Relation	index;
	Oid			indexid;
	Snapshot	snapshot;
	ScanKeyData key;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	RunTaskColumns c;
	RunTaskEntry *entries = NULL;
	int			nentries = 0;
	int			maxentries = 0;
	int			result = 0;
	KeptTask   *kept;
	bool		write_kept = false;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("ready_tasks", RowExclusiveLock);
	(void) direct_check_table(rel); /* a DELETE checks no constraint */
	CheckCmdReplicaIdentity(rel, CMD_DELETE);
	indexid = get_relname_relid("ready_tasks_by_run",
								RelationGetNamespace(rel));
	if (!OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("index \"durable.ready_tasks_by_run\" does not exist"),
				 errhint("durable needs its tables as its extension script made them.")));
	index = index_open(indexid, AccessShareLock);
	c.c_ns = column_index_typed(rel, "namespace", TEXTOID);
	c.c_queue = column_index_typed(rel, "task_queue", TEXTOID);
	c.c_kind = column_index_typed(rel, "kind", CHAROID);
	c.c_run = column_index_typed(rel, "run_id", UUIDOID);
	c.c_sched = column_index_typed(rel, "scheduled_event_id", INT8OID);
	c.c_attempt = column_index_typed(rel, "attempt", INT4OID);
	c.c_id = column_index_typed(rel, "task_id", INT8OID);
	c.c_priority = column_index_optional(rel, "priority", INT2OID);
	c.c_key = column_index_optional(rel, "concurrency_key", TEXTOID);
	c.c_not_before = column_index_optional(rel, "not_before", TIMESTAMPTZOID);
	if (index_column_of(index, c.c_run) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the index durable.ready_tasks_by_run does not start with run_id"),
				 errhint("durable needs its tables as its extension script made them.")));
	slot = table_slot_create(rel, NULL);

	/* The run's executor tasks the snapshot sees, in task id order */
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_UUID_EQ,
				UUIDPGetDatum(run_id));
	scan = index_beginscan(rel, index, snapshot, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	while (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		RunTaskEntry *e;

		if (!run_task_qualifies(&c, slot, run_id))
			continue;
		if (nentries == maxentries)
		{
			maxentries = Max(8, maxentries * 2);
			entries = entries == NULL ?
				palloc(sizeof(RunTaskEntry) * maxentries) :
				repalloc(entries, sizeof(RunTaskEntry) * maxentries);
		}
		e = &entries[nentries++];
		e->task_id = DatumGetInt64(slot->tts_values[c.c_id]);
		e->tid = slot->tts_tid;
		e->namespace = TextDatumGetCString(slot->tts_values[c.c_ns]);
		e->task_queue = TextDatumGetCString(slot->tts_values[c.c_queue]);
		e->kind = DatumGetChar(slot->tts_values[c.c_kind]);
		e->paused = false;
		e->limited = false;
	}
	index_endscan(scan);

	/*
	 * The task the chain kept in hand (store/kept_task.c), when the run has
	 * no other and its queue would hand it out: claimed without a row.  Else
	 * it is written, and the claim goes as it would have.
	 */
	kept = KeptTaskOfRun(run_id);
	if (kept != NULL)
	{
		if (nentries == 0 &&
			!TaskQueuePaused(kept->namespace, kept->task_queue, snapshot) &&
			(limited == NULL ||
			 !limited(kept->namespace, kept->task_queue, kept->kind)))
		{
			take_kept_task(run_id, task);
			result = 1;
		}
		else
			write_kept = true;
		nentries = 0;			/* no row claimed here */
	}

	if (nentries > 1)
		qsort(entries, nentries, sizeof(RunTaskEntry), run_task_cmp);

	/*
	 * Those of a paused queue are left out; of a queue with limits, kept
	 * for after the others.  A run's tasks are nearly always of one queue.
	 */
	for (int i = 0; i < nentries; i++)
	{
		RunTaskEntry *e = &entries[i];
		RunTaskEntry *prev = i > 0 ? &entries[i - 1] : NULL;

		if (prev != NULL && prev->kind == e->kind &&
			strcmp(prev->namespace, e->namespace) == 0 &&
			strcmp(prev->task_queue, e->task_queue) == 0)
		{
			e->paused = prev->paused;
			e->limited = prev->limited;
			continue;
		}
		e->paused = TaskQueuePaused(e->namespace, e->task_queue, snapshot);
		e->limited = !e->paused && limited != NULL &&
			limited(e->namespace, e->task_queue, e->kind);
	}

	/* The first free one without limits, else the first with them */
	for (int pass = 0; pass < 2 && result == 0; pass++)
	{
		for (int i = 0; i < nentries && result == 0; i++)
		{
			RunTaskEntry *e = &entries[i];
			ItemPointerData tid = e->tid;
			TM_FailureData tmfd;

			if (e->paused || e->limited != (pass == 1))
				continue;
			if (lock_row(rel, &tid, snapshot, slot, LockWaitSkip,
						 &tmfd) != TM_Ok)
				continue;		/* locked by another, or gone meanwhile */
			if (tmfd.traversed && !run_task_qualifies(&c, slot, run_id))
				continue;
			slot_getallattrs(slot);
			memset(task, 0, sizeof(*task));
			task->claimed.run_id = *run_id;
			task->claimed.scheduled_event_id =
				DatumGetInt64(slot->tts_values[c.c_sched]);
			task->claimed.attempt =
				DatumGetInt32(slot->tts_values[c.c_attempt]);
			task->claimed.task_id = DatumGetInt64(slot->tts_values[c.c_id]);
			task->claimed.priority = c.c_priority >= 0 ?
				DatumGetInt16(slot->tts_values[c.c_priority]) : 3;
			if (c.c_key >= 0 && !slot->tts_isnull[c.c_key])
				text_to_cstring_buffer(DatumGetTextPP(slot->tts_values[c.c_key]),
									   task->claimed.concurrency_key,
									   CLAIM_KEY_MAX);
			task->namespace = TextDatumGetCString(slot->tts_values[c.c_ns]);
			task->task_queue = TextDatumGetCString(slot->tts_values[c.c_queue]);
			task->kind = DatumGetChar(slot->tts_values[c.c_kind]);
			task->tid = slot->tts_tid;
			if (pass == 0)
			{
				simple_heap_delete(rel, &slot->tts_tid);
				result = 1;
			}
			else
				result = -1;
		}
	}

	ExecDropSingleTupleTableSlot(slot);
	index_close(index, NoLock);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	if (write_kept)
	{
		DirectWriteKeptTask();
		return DirectClaimRunTask(run_id, limited, task);
	}
	return result;
}

/*
 * Delete the task DirectClaimRunTask held for its limits (locked by this
 * transaction since, so it is still there): the claim.
 */
void
DirectDeleteHeldTask(RunTask *task)
{
	Relation	rel = DurableOpenTable("ready_tasks", RowExclusiveLock);

	simple_heap_delete(rel, &task->tid);
	table_close(rel, NoLock);
}

/*
 * Whether a btree index has no root page yet, and so no entry for any
 * snapshot, a dirty one included: a scan of it could return nothing.  A
 * btree gets its root with its first entry and loses it only to a TRUNCATE
 * or a REINDEX, which give it a new file and a new relcache entry.  The
 * tables of paused queues, of limits and of user timers, probed through an
 * index on every claim or close, are empty where nobody paused a queue, set
 * a limit or started a timer.  The metapage is read through shared buffers
 * (once the root is cached with the index, not at all), which costs less
 * than a scan's set-up and far less than the system call that reads the
 * size of a file (smgrnblocks: an lseek on every call outside recovery).
 * Another access method, or a page that is not a btree's metapage: false,
 * and the scan decides.
 */
static bool
index_has_no_entry(Relation index)
{
	Buffer		buf;
	Page		page;
	BTMetaPageData *meta;
	bool		empty;

	if (index->rd_rel->relam != BTREE_AM_OID || index->rd_amcache != NULL)
		return false;
	buf = ReadBuffer(index, BTREE_METAPAGE);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	meta = BTPageGetMeta(page);
	empty = !PageIsNew(page) && P_ISMETA(BTPageGetOpaque(page)) &&
		meta->btm_magic == BTREE_MAGIC && meta->btm_root == P_NONE;
	UnlockReleaseBuffer(buf);
	return empty;
}

/*
 * Whether durable.<relname> has a row, visible now, whose primary key starts
 * with this run id.  A probe of the index, to skip a statement that would
 * find nothing: callers hold the run's lock, under which alone such rows are
 * added, so none can appear after the probe.
 */
bool
DirectRunHasRows(const char *relname, pg_uuid_t *run_id)
{
	Relation	rel;
	Relation	index;
	Oid			pkey;
	AttrNumber	attno;
	ScanKeyData key;
	SysScanDesc scan;
	Snapshot	snapshot;
	bool		found;

	rel = DurableOpenTable(relname, AccessShareLock);
	pkey = primary_key(rel);
	index = index_open(pkey, AccessShareLock);
	if (index_has_no_entry(index))
	{
		index_close(index, NoLock);
		table_close(rel, NoLock);
		return false;
	}
	attno = index->rd_index->indkey.values[0];
	index_close(index, NoLock);
	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	if (TupleDescAttr(RelationGetDescr(rel), attno - 1)->atttypid != UUIDOID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the primary key of durable.%s does not start with a run id",
						relname),
				 errhint("durable needs its tables as its extension script made them.")));
	ScanKeyInit(&key, attno, BTEqualStrategyNumber, F_UUID_EQ,
				UUIDPGetDatum(run_id));
	scan = systable_beginscan(rel, pkey, true, snapshot, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return found;
}

/* The columns of durable.timers that DirectSetTimer writes */
static const DirectColumn timer_columns[] = {
	{"run_id", UUIDOID}, {"kind", TEXTOID}, {"ref_id", INT8OID},
	{"due_at", TIMESTAMPTZOID}, {"attempt", INT4OID}, {"payload", JSONBOID}
};

/*
 * Set a timer of a run, as
 *   INSERT INTO durable.timers (run_id, kind, ref_id, due_at [, attempt])
 *   ... ON CONFLICT (run_id, kind, ref_id) DO UPDATE SET due_at = ...
 *   [, attempt = ...]
 * does: an existing row is locked (waiting for a holder, following it to its
 * latest version) and updated, with new index entries since due_at is
 * indexed; otherwise a row is inserted.  Callers hold the lock under which
 * such a timer is created (its run's, or for an activity timer the
 * activity's), so no other transaction inserts the same key meanwhile.
 *
 * With keep_earlier, an existing row due at or before due_at is left as it
 * is, attempt included: the timer will fire by then, and its handler sets it
 * again for what is due later (TimerDueBy in timer_rows.c).  Only in READ
 * COMMITTED: there the snapshot, taken under the caller's lock, sees every
 * firing that deleted the row before it; a REPEATABLE READ snapshot may
 * predate one, and the row is locked and written as without keep_earlier.
 */
void
DirectSetTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id,
			   TimestampTz due_at, bool set_attempt, int32 attempt,
			   bool keep_earlier)
{
	DirectTable dt;
	int			att[lengthof(timer_columns)];
	Oid			pkey;
	ScanKeyData keys[3];
	text	   *kind_text = cstring_to_text(kind);
	TupleDesc	desc;

	direct_open(&dt, "timers", lengthof(timer_columns), timer_columns, att);
	CheckCmdReplicaIdentity(dt.rel, CMD_UPDATE);
	desc = RelationGetDescr(dt.rel);
	pkey = primary_key(dt.rel);
	ScanKeyInit(&keys[0], att[0] + 1, BTEqualStrategyNumber, F_UUID_EQ,
				UUIDPGetDatum(run_id));
	ScanKeyEntryInitialize(&keys[1], 0, att[1] + 1, BTEqualStrategyNumber,
						   InvalidOid, TupleDescAttr(desc, att[1])->attcollation,
						   F_TEXTEQ, PointerGetDatum(kind_text));
	ScanKeyInit(&keys[2], att[2] + 1, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(ref_id));

	for (;;)
	{
		Snapshot	snapshot;
		SysScanDesc scan;
		HeapTuple	tuple;
		ItemPointerData tid;
		bool		found = false;
		TM_FailureData tmfd;
		TM_Result	res;
		HeapTuple	oldtup;
		HeapTuple	newtup;
		Datum	   *repl;
		bool	   *repl_null;
		bool	   *replace;

		CommandCounterIncrement();
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		scan = systable_beginscan(dt.rel, pkey, true, snapshot, 3, keys);
		if (HeapTupleIsValid(tuple = systable_getnext(scan)))
		{
			tid = tuple->t_self;
			found = true;
			if (keep_earlier && !IsolationUsesXactSnapshot())
			{
				bool		isnull;
				Datum		due = heap_getattr(tuple, att[3] + 1, desc,
											   &isnull);

				if (!isnull && DatumGetTimestampTz(due) <= due_at)
				{
					systable_endscan(scan);
					UnregisterSnapshot(snapshot);
					break;
				}
			}
		}
		systable_endscan(scan);

		if (!found)
		{
			Datum	   *values = palloc0(sizeof(Datum) * dt.natts);
			bool	   *isnull = palloc(sizeof(bool) * dt.natts);

			UnregisterSnapshot(snapshot);
			memset(isnull, true, sizeof(bool) * dt.natts);
			values[att[0]] = UUIDPGetDatum(run_id);
			values[att[1]] = PointerGetDatum(kind_text);
			values[att[2]] = Int64GetDatum(ref_id);
			values[att[3]] = TimestampTzGetDatum(due_at);
			values[att[4]] = Int32GetDatum(set_attempt ? attempt : 0);
			isnull[att[0]] = isnull[att[1]] = isnull[att[2]] = false;
			isnull[att[3]] = isnull[att[4]] = false;
			direct_insert(&dt, values, isnull);
			break;
		}

		res = lock_row(dt.rel, &tid, snapshot, dt.slot, LockWaitBlock, &tmfd);
		UnregisterSnapshot(snapshot);
		if (res == TM_Deleted)
			continue;			/* gone meanwhile: insert it */
		if (res != TM_Ok)
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);

		oldtup = ExecCopySlotHeapTuple(dt.slot);
		repl = palloc0(sizeof(Datum) * dt.natts);
		repl_null = palloc0(sizeof(bool) * dt.natts);
		replace = palloc0(sizeof(bool) * dt.natts);
		repl[att[3]] = TimestampTzGetDatum(due_at);
		replace[att[3]] = true;
		if (set_attempt)
		{
			repl[att[4]] = Int32GetDatum(attempt);
			replace[att[4]] = true;
		}
		newtup = heap_modify_tuple(oldtup, desc, repl, repl_null, replace);
		check_new_row(dt.rel, newtup, replace, repl_null, dt.user_checks);
		simple_heap_update(dt.rel, &dt.slot->tts_tid, newtup);
		note_written(dt.rel);
		if (!HeapTupleIsHeapOnly(newtup) && dt.rri->ri_NumIndices > 0)
		{
			List	   *recheck;

			ExecForceStoreHeapTuple(newtup, dt.slot, false);
			dt.slot->tts_tid = newtup->t_self;
			recheck = ExecInsertIndexTuples(dt.rri, dt.slot, dt.estate, false,
											false, NULL, NIL);
			list_free(recheck);
		}
		break;
	}
	direct_close(&dt);
}

/*
 * Delete a run's timers but those of one kind, as
 *   DELETE FROM durable.timers WHERE run_id = $1 AND kind <> $2
 * does: a row locked by another transaction is waited for and, if it was
 * deleted meanwhile, passed over.  Returns how many were deleted.
 */
int
DirectDeleteRunTimers(pg_uuid_t *run_id, const char *except_kind)
{
	Relation	rel;
	Oid			pkey;
	ScanKeyData key;
	SysScanDesc scan;
	Snapshot	snapshot;
	HeapTuple	tuple;
	TupleTableSlot *slot;
	int			c_run;
	int			c_kind;
	int			n = 0;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("timers", RowExclusiveLock);
	(void) direct_check_table(rel);		/* a DELETE checks no constraint */
	CheckCmdReplicaIdentity(rel, CMD_DELETE);
	pkey = primary_key(rel);
	c_run = column_index_typed(rel, "run_id", UUIDOID);
	c_kind = column_index_typed(rel, "kind", TEXTOID);
	ScanKeyInit(&key, c_run + 1, BTEqualStrategyNumber, F_UUID_EQ,
				UUIDPGetDatum(run_id));
	slot = table_slot_create(rel, NULL);
	scan = systable_beginscan(rel, pkey, true, snapshot, 1, &key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		ItemPointerData tid = tuple->t_self;
		bool		isnull;
		TM_FailureData tmfd;
		TM_Result	res;

		if (strcmp(TextDatumGetCString(heap_getattr(tuple, c_kind + 1,
													RelationGetDescr(rel),
													&isnull)),
				   except_kind) == 0)
			continue;
		res = lock_row(rel, &tid, snapshot, slot, LockWaitBlock, &tmfd);
		if (res == TM_Deleted || res == TM_SelfModified)
			continue;			/* deleted meanwhile */
		if (res != TM_Ok)
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);
		/* A newer version is rechecked, as EvalPlanQual would. */
		if (tmfd.traversed)
		{
			slot_getallattrs(slot);
			if (strcmp(TextDatumGetCString(slot->tts_values[c_kind]),
					   except_kind) == 0 ||
				memcmp(DatumGetUUIDP(slot->tts_values[c_run]), run_id,
					   sizeof(pg_uuid_t)) != 0)
				continue;
		}
		simple_heap_delete(rel, &slot->tts_tid);
		n++;
	}
	systable_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return n;
}

/*
 * Start an attempt of an activity, as
 *   UPDATE durable.activities SET state = 'STARTED', started_time = $4,
 *     last_worker_identity = $5, task_secret = $6
 *   WHERE run_id = $1 AND scheduled_event_id = $2 AND attempt = $3
 *     AND state = 'SCHEDULED' AND next_attempt_time IS NULL
 * does (a row another transaction holds is waited for, and its latest
 * version rechecked), and return a copy of the new row and of its
 * descriptor; NULL when no row qualifies.  A database at 0.2.0 has no
 * task_secret column: the secret is not kept (nor in the row returned).
 */
HeapTuple
DirectStartActivityAttempt(pg_uuid_t *run_id, int64 scheduled_event_id,
						   int32 attempt, TimestampTz now,
						   const char *identity, int64 secret,
						   TupleDesc *desc_out)
{
	Relation	rel;
	TupleDesc	desc;
	Oid			pkey;
	ScanKeyData keys[2];
	SysScanDesc scan;
	Snapshot	snapshot;
	HeapTuple	tuple;
	TupleTableSlot *slot;
	ItemPointerData tid;
	bool		found = false;
	TM_FailureData tmfd;
	TM_Result	res;
	HeapTuple	result = NULL;
	int			c_attempt;
	int			c_state;
	int			c_next;
	int			c_started;
	int			c_identity;
	int			c_secret;
	bool		user_checks;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("activities", RowExclusiveLock);
	user_checks = direct_check_table(rel);
	CheckCmdReplicaIdentity(rel, CMD_UPDATE);
	desc = RelationGetDescr(rel);
	pkey = primary_key(rel);
	c_attempt = column_index_typed(rel, "attempt", INT4OID);
	c_state = column_index_typed(rel, "state", TEXTOID);
	c_next = column_index_typed(rel, "next_attempt_time", TIMESTAMPTZOID);
	c_started = column_index_typed(rel, "started_time", TIMESTAMPTZOID);
	c_identity = column_index_typed(rel, "last_worker_identity", TEXTOID);
	c_secret = column_index_optional(rel, "task_secret", INT8OID);
	ScanKeyInit(&keys[0], column_index_typed(rel, "run_id", UUIDOID) + 1,
				BTEqualStrategyNumber, F_UUID_EQ, UUIDPGetDatum(run_id));
	ScanKeyInit(&keys[1],
				column_index_typed(rel, "scheduled_event_id", INT8OID) + 1,
				BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(scheduled_event_id));
	slot = table_slot_create(rel, NULL);

#define ATTEMPT_QUALIFIES(slot) \
	(!(slot)->tts_isnull[c_attempt] && \
	 DatumGetInt32((slot)->tts_values[c_attempt]) == attempt && \
	 !(slot)->tts_isnull[c_state] && \
	 strcmp(TextDatumGetCString((slot)->tts_values[c_state]), "SCHEDULED") == 0 && \
	 (slot)->tts_isnull[c_next])

	scan = systable_beginscan(rel, pkey, true, snapshot, 2, keys);
	if (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		ExecForceStoreHeapTuple(tuple, slot, false);
		slot_getallattrs(slot);
		tid = tuple->t_self;
		found = ATTEMPT_QUALIFIES(slot);
	}
	systable_endscan(scan);

	if (found)
	{
		res = lock_row(rel, &tid, snapshot, slot, LockWaitBlock, &tmfd);
		if (res == TM_Ok)
		{
			slot_getallattrs(slot);
			/* A newer version is rechecked, as EvalPlanQual would. */
			if (!tmfd.traversed || ATTEMPT_QUALIFIES(slot))
			{
				HeapTuple	oldtup = ExecCopySlotHeapTuple(slot);
				Datum	   *repl = palloc0(sizeof(Datum) * desc->natts);
				bool	   *repl_null = palloc0(sizeof(bool) * desc->natts);
				bool	   *replace = palloc0(sizeof(bool) * desc->natts);

				repl[c_state] = CStringGetTextDatum("STARTED");
				repl[c_started] = TimestampTzGetDatum(now);
				if (identity != NULL)
					repl[c_identity] = CStringGetTextDatum(identity);
				else
					repl_null[c_identity] = true;
				replace[c_state] = replace[c_started] = true;
				replace[c_identity] = true;
				if (c_secret >= 0)
				{
					repl[c_secret] = Int64GetDatum(secret);
					replace[c_secret] = true;
				}
				result = heap_modify_tuple(oldtup, desc, repl, repl_null,
										   replace);
				check_new_row(rel, result, replace, repl_null, user_checks);
				simple_heap_update(rel, &slot->tts_tid, result);
				note_written(rel);
				if (!HeapTupleIsHeapOnly(result))
				{
					EState	   *estate = CreateExecutorState();
					ResultRelInfo *rri = makeNode(ResultRelInfo);
					List	   *recheck;

					InitResultRelInfo(rri, rel, 0, NULL, 0);
					OpenIndicesKeptInfo(rri);
					ExecForceStoreHeapTuple(result, slot, false);
					slot->tts_tid = result->t_self;
					recheck = ExecInsertIndexTuples(rri, slot, estate, false,
													false, NULL, NIL);
					list_free(recheck);
					close_indexes_keep_locks(rri);
					FreeExecutorState(estate);
				}
			}
		}
		else if (res != TM_Deleted && res != TM_SelfModified)
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);
	}
#undef ATTEMPT_QUALIFIES
	ExecDropSingleTupleTableSlot(slot);
	if (result != NULL)
		*desc_out = CreateTupleDescCopy(desc);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return result;
}

/*
 * The columns of durable.activities the engine reads and writes, in the
 * order of ACTIVITY_COLUMNS (engine/activities.c), and those a database not
 * yet updated lacks: task_secret (0.3.0), priority and concurrency_key
 * (0.9.0).
 */
static const DirectColumn activity_columns[DIRECT_ACTIVITY_NCOLUMNS] = {
	{"run_id", UUIDOID}, {"scheduled_event_id", INT8OID},
	{"namespace", TEXTOID}, {"workflow_id", TEXTOID},
	{"activity_id", TEXTOID}, {"activity_type", TEXTOID},
	{"task_queue", TEXTOID}, {"input", JSONBOID}, {"state", TEXTOID},
	{"attempt", INT4OID}, {"retry_policy", JSONBOID},
	{"schedule_to_start_timeout", FLOAT8OID},
	{"start_to_close_timeout", FLOAT8OID},
	{"schedule_to_close_timeout", FLOAT8OID},
	{"heartbeat_timeout", FLOAT8OID},
	{"first_scheduled_time", TIMESTAMPTZOID},
	{"scheduled_time", TIMESTAMPTZOID}, {"started_time", TIMESTAMPTZOID},
	{"last_heartbeat_time", TIMESTAMPTZOID},
	{"heartbeat_details", JSONBOID}, {"last_failure_reason", TEXTOID},
	{"last_failure_details", JSONBOID},
	{"next_attempt_time", TIMESTAMPTZOID},
	{"last_worker_identity", TEXTOID}, {"cancel_requested", BOOLOID}
};
static const DirectColumn activity_optional_columns[] = {
	{"task_secret", INT8OID}, {"priority", INT2OID},
	{"concurrency_key", TEXTOID}
};

/*
 * The unique index of durable.activities on (run_id, activity_id), which an
 * INSERT ... ON CONFLICT (run_id, activity_id) infers as its arbiter.
 */
static Oid
activity_id_index(Relation rel, int c_run, int c_id)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = index->rd_index;

		if (form->indisunique && form->indimmediate && form->indisvalid &&
			form->indnkeyatts == 2 &&
			RelationGetIndexPredicate(index) == NIL &&
			RelationGetIndexExpressions(index) == NIL &&
			((form->indkey.values[0] == c_run + 1 &&
			  form->indkey.values[1] == c_id + 1) ||
			 (form->indkey.values[0] == c_id + 1 &&
			  form->indkey.values[1] == c_run + 1)))
			found = RelationGetRelid(index);
		index_close(index, AccessShareLock);
		if (OidIsValid(found))
			break;
	}
	list_free(indexes);
	if (!OidIsValid(found))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("there is no unique or exclusion constraint matching the ON CONFLICT specification")));
	return found;
}

/*
 * Insert the row of an activity just scheduled, as
 *   INSERT INTO durable.activities (...) VALUES (...)
 *     ON CONFLICT (run_id, activity_id) DO NOTHING
 * does; values and isnull are its DIRECT_ACTIVITY_NCOLUMNS columns in the
 * order of ACTIVITY_COLUMNS (engine/activities.c).  With set_order, priority
 * and concurrency_key (NULL: none) are written too, where the schema has
 * them (0.9.0); task_secret is left NULL.  Returns false, writing nothing,
 * when the run has a pending activity of this activity_id.  The caller holds
 * the run's row lock, under which every activity of the run is inserted and
 * deleted: the probe of the unique index sees every row that could conflict.
 */
bool
DirectInsertActivity(const Datum *values, const bool *isnull, bool set_order,
					 int16 priority, const char *concurrency_key)
{
	DirectTable dt;
	int			att[DIRECT_ACTIVITY_NCOLUMNS];
	int			opt[lengthof(activity_optional_columns)];
	Datum	   *vals;
	bool	   *nulls;
	Oid			index;
	ScanKeyData keys[2];
	SysScanDesc scan;
	Snapshot	snapshot;
	bool		conflict;
	int			i;

	/* What this call wrote so far is visible to the probe. */
	CommandCounterIncrement();
	direct_open_with(&dt, "activities", DIRECT_ACTIVITY_NCOLUMNS,
					 activity_columns, att,
					 lengthof(activity_optional_columns),
					 activity_optional_columns, opt);
	index = activity_id_index(dt.rel, att[0], att[4]);
	ScanKeyInit(&keys[0], att[0] + 1, BTEqualStrategyNumber, F_UUID_EQ,
				values[0]);
	ScanKeyEntryInitialize(&keys[1], 0, att[4] + 1, BTEqualStrategyNumber,
						   InvalidOid,
						   TupleDescAttr(RelationGetDescr(dt.rel),
										 att[4])->attcollation,
						   F_TEXTEQ, values[4]);
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	scan = systable_beginscan(dt.rel, index, true, snapshot, 2, keys);
	conflict = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	if (conflict)
	{
		direct_close(&dt);
		return false;
	}

	vals = palloc0(sizeof(Datum) * dt.natts);
	nulls = palloc(sizeof(bool) * dt.natts);
	memset(nulls, true, sizeof(bool) * dt.natts);
	for (i = 0; i < DIRECT_ACTIVITY_NCOLUMNS; i++)
	{
		vals[att[i]] = values[i];
		nulls[att[i]] = isnull[i];
	}
	if (set_order && opt[1] >= 0)
	{
		vals[opt[1]] = Int16GetDatum(priority);
		nulls[opt[1]] = false;
	}
	if (set_order && opt[2] >= 0 && concurrency_key != NULL)
	{
		vals[opt[2]] = CStringGetTextDatum(concurrency_key);
		nulls[opt[2]] = false;
	}
	direct_insert(&dt, vals, nulls);
	direct_close(&dt);
	return true;
}

/* Scan keys of an activity's primary key (run_id, scheduled_event_id). */
static void
activity_keys(Relation rel, ScanKey keys, pg_uuid_t *run_id,
			  int64 scheduled_event_id)
{
	ScanKeyInit(&keys[0], column_index_typed(rel, "run_id", UUIDOID) + 1,
				BTEqualStrategyNumber, F_UUID_EQ, UUIDPGetDatum(run_id));
	ScanKeyInit(&keys[1],
				column_index_typed(rel, "scheduled_event_id", INT8OID) + 1,
				BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(scheduled_event_id));
}

/*
 * Read an activity's row through its primary key whatever the table's
 * statistics say, with a fresh snapshot, and return a copy of it and of its
 * descriptor; NULL when there is no such row.  With lock, as
 *   SELECT * FROM durable.activities
 *   WHERE run_id = $1 AND scheduled_event_id = $2 FOR UPDATE
 * does: a holder is waited for and the latest version locked (under
 * REPEATABLE READ and SERIALIZABLE a row changed since the snapshot is a
 * serialization failure); NULL too when it was deleted meanwhile.
 */
static HeapTuple
fetch_activity(pg_uuid_t *run_id, int64 scheduled_event_id, bool lock,
			   TupleDesc *desc_out)
{
	Relation	rel;
	ScanKeyData keys[2];
	Snapshot	snapshot;
	ItemPointerData tid;
	HeapTuple	result = NULL;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("activities", lock ? RowShareLock : AccessShareLock);
	/* FOR UPDATE is a write to a statement: refused in a read-only one. */
	if (lock && XactReadOnly)
		PreventCommandIfReadOnly("a lock of a row of durable.activities");
	activity_keys(rel, keys, run_id, scheduled_event_id);
	if (primary_key_tid(rel, snapshot, 2, keys, &tid))
	{
		TupleTableSlot *slot = table_slot_create(rel, NULL);
		TM_FailureData tmfd;

		if (lock ? lock_row(rel, &tid, snapshot, slot, LockWaitBlock,
							&tmfd) == TM_Ok :
			table_tuple_fetch_row_version(rel, &tid, snapshot, slot))
			result = ExecCopySlotHeapTuple(slot);
		/* else changed by this very command (as ExecLockRows), or gone */
		ExecDropSingleTupleTableSlot(slot);
	}
	if (result != NULL)
		*desc_out = CreateTupleDescCopy(RelationGetDescr(rel));
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return result;
}

/* Lock and read an activity's row (fetch_activity) */
HeapTuple
DirectFetchActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
					TupleDesc *desc_out)
{
	return fetch_activity(run_id, scheduled_event_id, true, desc_out);
}

/*
 * Read an activity's row unlocked (fetch_activity): a read that writes
 * nothing, where a lock would give the transaction an xid.
 */
HeapTuple
DirectReadActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
				   TupleDesc *desc_out)
{
	return fetch_activity(run_id, scheduled_event_id, false, desc_out);
}

/*
 * Update columns of an activity's row, which this transaction holds locked,
 * as an UPDATE ... WHERE run_id = $1 AND scheduled_event_id = $2 of those
 * columns does (names are columns of ACTIVITY_COLUMNS, engine/activities.c).
 * No row: nothing is done, as such an UPDATE updates none.
 */
void
DirectUpdateActivity(pg_uuid_t *run_id, int64 scheduled_event_id, int n,
					 const char *const *names, const Datum *values,
					 const bool *isnull)
{
	DirectTable dt;
	ScanKeyData keys[2];
	ItemPointerData updated;

	CommandCounterIncrement();
	direct_open_table(&dt, "activities", false);
	activity_keys(dt.rel, keys, run_id, scheduled_event_id);
	(void) update_row(&dt, 2, keys, NULL, n, names, activity_columns,
					  DIRECT_ACTIVITY_NCOLUMNS, values, isnull, &updated);
	direct_close(&dt);
}

/*
 * Delete an activity's row as
 *   DELETE FROM durable.activities
 *   WHERE run_id = $1 AND scheduled_event_id = $2
 *     [AND attempt = $3 AND state <> 'SCHEDULED'] RETURNING *
 * does, the bracketed condition with only_started: a row another
 * transaction holds is waited for, and its latest version rechecked, as
 * EvalPlanQual would.  Returns whether a row was deleted; with tuple_out,
 * sets it and *desc_out to copies of the row (as RETURNING * has it) and of
 * its descriptor.
 */
bool
DirectDeleteActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
					 bool only_started, int32 attempt, HeapTuple *tuple_out,
					 TupleDesc *desc_out)
{
	Relation	rel;
	ScanKeyData keys[2];
	SysScanDesc scan;
	Snapshot	snapshot;
	HeapTuple	tuple;
	TupleTableSlot *slot;
	ItemPointerData tid;
	bool		found = false;
	TM_FailureData tmfd;
	TM_Result	res;
	bool		deleted = false;
	int			c_attempt = -1;
	int			c_state = -1;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("activities", RowExclusiveLock);
	(void) direct_check_table(rel);		/* a DELETE checks no constraint */
	CheckCmdReplicaIdentity(rel, CMD_DELETE);
	if (only_started)
	{
		c_attempt = column_index_typed(rel, "attempt", INT4OID);
		c_state = column_index_typed(rel, "state", TEXTOID);
	}
	activity_keys(rel, keys, run_id, scheduled_event_id);
	slot = table_slot_create(rel, NULL);

#define DELETE_QUALIFIES(slot) \
	(!only_started || \
	 (!(slot)->tts_isnull[c_attempt] && \
	  DatumGetInt32((slot)->tts_values[c_attempt]) == attempt && \
	  !(slot)->tts_isnull[c_state] && \
	  strcmp(TextDatumGetCString((slot)->tts_values[c_state]), "SCHEDULED") != 0))

	scan = systable_beginscan(rel, primary_key(rel), true, snapshot, 2, keys);
	if (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		ExecForceStoreHeapTuple(tuple, slot, false);
		slot_getallattrs(slot);
		tid = tuple->t_self;
		found = DELETE_QUALIFIES(slot);
	}
	systable_endscan(scan);

	if (found)
	{
		res = lock_row(rel, &tid, snapshot, slot, LockWaitBlock, &tmfd);
		if (res == TM_Ok)
		{
			slot_getallattrs(slot);
			if (!tmfd.traversed || DELETE_QUALIFIES(slot))
			{
				if (tuple_out != NULL)
				{
					*tuple_out = ExecCopySlotHeapTuple(slot);
					*desc_out = CreateTupleDescCopy(RelationGetDescr(rel));
				}
				simple_heap_delete(rel, &slot->tts_tid);
				deleted = true;
			}
		}
		else if (res != TM_Deleted && res != TM_SelfModified)
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);
	}
#undef DELETE_QUALIFIES
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return deleted;
}

/*
 * Delete a timer by its full key, as
 *   DELETE FROM durable.timers WHERE run_id = $1 AND kind = $2 AND ref_id = $3
 * does (a holder is waited for; a row deleted meanwhile is passed over).
 * Returns whether a row was deleted.
 */
bool
DirectDeleteTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id)
{
	Relation	rel;
	ScanKeyData keys[3];
	SysScanDesc scan;
	Snapshot	snapshot;
	HeapTuple	tuple;
	TupleTableSlot *slot;
	ItemPointerData tid;
	bool		found = false;
	bool		deleted = false;
	TM_FailureData tmfd;
	TM_Result	res;
	int			c_kind;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	rel = DurableOpenTable("timers", RowExclusiveLock);
	(void) direct_check_table(rel);		/* a DELETE checks no constraint */
	CheckCmdReplicaIdentity(rel, CMD_DELETE);
	c_kind = column_index_typed(rel, "kind", TEXTOID);
	ScanKeyInit(&keys[0], column_index_typed(rel, "run_id", UUIDOID) + 1,
				BTEqualStrategyNumber, F_UUID_EQ, UUIDPGetDatum(run_id));
	ScanKeyEntryInitialize(&keys[1], 0, c_kind + 1, BTEqualStrategyNumber,
						   InvalidOid,
						   TupleDescAttr(RelationGetDescr(rel),
										 c_kind)->attcollation,
						   F_TEXTEQ, PointerGetDatum(cstring_to_text(kind)));
	ScanKeyInit(&keys[2], column_index_typed(rel, "ref_id", INT8OID) + 1,
				BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(ref_id));
	scan = systable_beginscan(rel, primary_key(rel), true, snapshot, 3, keys);
	if (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		tid = tuple->t_self;
		found = true;
	}
	systable_endscan(scan);
	if (found)
	{
		slot = table_slot_create(rel, NULL);
		res = lock_row(rel, &tid, snapshot, slot, LockWaitBlock, &tmfd);
		/* the key of a timer is never updated: a newer version still has it */
		if (res == TM_Ok)
		{
			simple_heap_delete(rel, &slot->tts_tid);
			deleted = true;
		}
		else if (res != TM_Deleted && res != TM_SelfModified)
			elog(ERROR, "unexpected table_tuple_lock status: %u", res);
		ExecDropSingleTupleTableSlot(slot);
	}
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return deleted;
}

/* The columns of durable.activity_attempt_log, all of them the engine's */
static const DirectColumn attempt_log_columns[DIRECT_ATTEMPT_LOG_NCOLUMNS] = {
	{"run_id", UUIDOID}, {"scheduled_event_id", INT8OID},
	{"attempt", INT4OID}, {"activity_id", TEXTOID},
	{"activity_type", TEXTOID}, {"worker_identity", TEXTOID},
	{"scheduled_time", TIMESTAMPTZOID}, {"started_time", TIMESTAMPTZOID},
	{"end_time", TIMESTAMPTZOID}, {"outcome", TEXTOID},
	{"failure_reason", TEXTOID}, {"failure_details", JSONBOID},
	{"next_retry_time", TIMESTAMPTZOID}
};

/*
 * Log an ended attempt of an activity, as an INSERT into
 * durable.activity_attempt_log of its columns in the order above does.
 */
void
DirectLogActivityAttempt(const Datum *values, const bool *isnull)
{
	DirectTable dt;
	int			att[DIRECT_ATTEMPT_LOG_NCOLUMNS];
	Datum	   *vals;
	bool	   *nulls;
	int			i;

	direct_open(&dt, "activity_attempt_log", DIRECT_ATTEMPT_LOG_NCOLUMNS,
				attempt_log_columns, att);
	vals = palloc0(sizeof(Datum) * dt.natts);
	nulls = palloc(sizeof(bool) * dt.natts);
	memset(nulls, true, sizeof(bool) * dt.natts);
	for (i = 0; i < DIRECT_ATTEMPT_LOG_NCOLUMNS; i++)
	{
		vals[att[i]] = values[i];
		nulls[att[i]] = isnull[i];
	}
	direct_insert(&dt, vals, nulls);
	direct_close(&dt);
}

/* The OID of durable.paused_task_queues, or InvalidOid before 0.7.0. */
static Oid
paused_relid(void)
{
	Oid			nsp = get_namespace_oid("durable", true);

	return OidIsValid(nsp) ? get_relname_relid("paused_task_queues", nsp) :
		InvalidOid;
}

/* Whether the schema has durable.paused_task_queues (0.7.0). */
bool
TaskQueuePausesStored(void)
{
	return OidIsValid(paused_relid());
}

/*
 * Walk the rows of durable.<relname> whose first nkeys primary key columns,
 * all text, equal keys, as snapshot sees them (NULL: the transaction's
 * current snapshot), in the key's order: each(slot, snapshot, arg) gets each
 * row and returns whether to go on; NULL stops at the first.  Returns the
 * rows visited.  A table missing from the schema (an older version, or
 * dropped with the extension since the lookup) has none: the caller's next
 * table of durable's (DurableOpenTable) reports a drop with 55000.
 */
int
DirectScanTextKey(const char *relname, int nkeys, const char *const *keys,
				  Snapshot snapshot,
				  bool (*each) (TupleTableSlot *slot, Snapshot snapshot, void *arg),
				  void *arg)
{
	return DirectScanTextIndex(relname, NULL, nkeys, keys, snapshot, each,
							   arg);
}

/*
 * DirectScanTextKey through another index of the table than its primary
 * key (indexname NULL: the primary key), whose first nkeys columns are the
 * table's text columns compared; an index missing (an older version) makes
 * a table without rows.
 */
int
DirectScanTextIndex(const char *relname, const char *indexname, int nkeys,
					const char *const *keys, Snapshot snapshot,
					bool (*each) (TupleTableSlot *slot, Snapshot snapshot, void *arg),
					void *arg)
{
	Relation	rel;
	Relation	index;
	Oid			indexid;
	TupleDesc	desc;
	ScanKeyData scankeys[INDEX_MAX_KEYS];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	bool		own_snapshot = (snapshot == NULL);
	int			n = 0;
	int			i;

	Assert(nkeys > 0 && nkeys <= INDEX_MAX_KEYS);
	rel = try_open_durable_table(relname, AccessShareLock);
	if (rel == NULL)
		return 0;

	if (indexname == NULL)
	{
		indexid = RelationGetPrimaryKeyIndex(rel);
		if (!OidIsValid(indexid))
			elog(ERROR, "durable.%s has no primary key", relname);
	}
	else
	{
		indexid = get_relname_relid(indexname, RelationGetNamespace(rel));
		if (!OidIsValid(indexid))
		{
			table_close(rel, NoLock);	/* kept, as below */
			return 0;
		}
	}
	desc = RelationGetDescr(rel);
	index = index_open(indexid, AccessShareLock);
	if (index->rd_index->indrelid != RelationGetRelid(rel) ||
		index->rd_index->indnkeyatts < nkeys)
		elog(ERROR, "index durable.%s is not an index of durable.%s's first %d columns",
			 RelationGetRelationName(index), relname, nkeys);
	if (index_has_no_entry(index))
	{
		index_close(index, NoLock); /* kept, as below */
		table_close(rel, NoLock);
		return 0;
	}
	if (own_snapshot)
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
	/* Compared in the columns' collation, as the index does. */
	for (i = 0; i < nkeys; i++)
	{
		int			att = index->rd_index->indkey.values[i] - 1;

		if (att < 0 || TupleDescAttr(desc, att)->atttypid != TEXTOID)
			elog(ERROR, "column %d of index durable.%s is not a text column",
				 i + 1, RelationGetRelationName(index));
		ScanKeyEntryInitialize(&scankeys[i], 0, i + 1, BTEqualStrategyNumber,
							   InvalidOid,
							   TupleDescAttr(desc, att)->attcollation,
							   F_TEXTEQ, CStringGetTextDatum(keys[i]));
	}
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, index, snapshot, nkeys, 0);
	index_rescan(scan, scankeys, nkeys, NULL, 0);
	while (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		n++;
		if (each == NULL || !each(slot, snapshot, arg))
			break;
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	if (own_snapshot)
		UnregisterSnapshot(snapshot);
	/*
	 * The locks are kept to the end of the transaction, as a SELECT keeps
	 * them: a claim probes the same limit tables again and again in one
	 * transaction (an executor's chain), and each release made the next
	 * probe take its lock through the lock manager again.
	 */
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return n;
}

/*
 * Whether (namespace, workflow_id) has a run, visible now: 1 or 0, by one
 * probe of the index of the runs of a workflow id, runs_of_workflow_id
 * (0.12.0; engine/runs.h) or runs_by_workflow_id before it; -1 when the
 * schema has no such index to tell.
 */
int
DirectWorkflowHasRuns(const char *namespace, const char *workflow_id)
{
	Oid			nsp = get_namespace_oid("durable", true);
	const char *keys[2] = {namespace, workflow_id};
	const char *indexname = "runs_of_workflow_id";

	if (!OidIsValid(nsp))
		return -1;
	if (!OidIsValid(get_relname_relid(indexname, nsp)))
	{
		indexname = "runs_by_workflow_id";
		if (!OidIsValid(get_relname_relid(indexname, nsp)))
			return -1;
	}
	/* Runs this transaction wrote are visible, as to its next statement. */
	CommandCounterIncrement();
	return DirectScanTextIndex("runs", indexname, 2, keys, NULL,
							   NULL, NULL) > 0 ? 1 : 0;
}

/*
 * Whether a queue is paused, as the snapshot sees durable.paused_task_queues
 * (NULL: the transaction's current snapshot): a probe of its primary key.
 * Never before 0.7.0.
 */
bool
TaskQueuePaused(const char *namespace, const char *task_queue,
				Snapshot snapshot)
{
	const char *keys[2] = {namespace, task_queue};

	if (!QueueControlsMayExist(namespace, task_queue))
		return false;
	return DirectScanTextKey("paused_task_queues", 2, keys, snapshot,
							 NULL, NULL) > 0;
}
