/*-------------------------------------------------------------------------
 *
 * index_info.c
 *	  The indexes of a table durable writes directly, opened for inserts
 *	  with their descriptions built once per backend.
 *
 * Every call that inserts a row into one of durable's tables, or updates
 * one so that it is not HOT, opens the table's indexes as the executor does
 * for an INSERT (ExecOpenIndices): it locks and opens each index, then
 * describes it (BuildIndexInfo: its columns, its predicate and expressions,
 * copied out of the relcache), and the insert compiles the predicate of
 * every partial index and the expressions of every expression index before
 * it can tell whether the row goes there.  durable.runs has eleven indexes,
 * five of them partial and one on an expression: describing and compiling
 * them cost more than the entries a run's start writes.  A statement does
 * that once and inserts many rows; the engine's calls insert a few rows
 * each, in a transaction of their own.
 *
 * So each index's description (IndexInfo) is built once per backend and
 * kept, with its predicate and expressions compiled (ExprState) when they
 * call no code a user wrote (below); each open still locks and opens the
 * index and gets its own copy of the description, in which an insert may
 * note what it needs (the unique checks of ON CONFLICT, an access method's
 * cache).
 *
 * What a description says changes only with the index's definition, and
 * every such change (and any update of the index's pg_class or pg_index
 * row, VACUUM's statistics included) invalidates the index's relcache
 * entry: the callback below forgets the description then.  An open has
 * locked the index first, which reads the invalidations.  A transaction may
 * still hold copies of a forgotten description (a table kept open by an
 * executor's chain, and the invalidation read by a lock taken meanwhile),
 * so a description is freed with the transaction that forgets it, not
 * before.
 *
 * A compiled expression is shared by every open of its index in the
 * backend.  Evaluating it cannot start another evaluation of it as long as
 * it calls only built-in functions on built-in types: nothing a user wrote
 * runs inside (a domain's CHECK, a type's operators), and so nothing that
 * could call durable and insert into the same table again.  An index whose
 * predicate or expressions call anything else (an index a user added) keeps
 * its description, and gets them compiled by each transaction that
 * inserts, as an INSERT would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/transam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "base/invalidation.h"
#include "store/index_info.h"

typedef struct KeptIndexInfo
{
	Oid			indexoid;		/* hash key */
	MemoryContext cxt;			/* holds info and everything it points to */
	IndexInfo  *info;
} KeptIndexInfo;

static HTAB *kept_index_infos = NULL;

/*
 * Let go of a description: freed now outside a transaction, at the end of
 * the transaction otherwise (its copies may be in use).
 */
static void
retire_index_info(KeptIndexInfo *kept)
{
	if (TopTransactionContext != NULL)
		MemoryContextSetParent(kept->cxt, TopTransactionContext);
	else
		MemoryContextDelete(kept->cxt);
}

/* Relcache callback: forget the description of an index invalidated */
static void
forget_index_infos(Datum arg, Oid relid)
{
	KeptIndexInfo *kept;
	HASH_SEQ_STATUS status;

	if (kept_index_infos == NULL)
		return;
	if (OidIsValid(relid))
	{
		kept = hash_search(kept_index_infos, &relid, HASH_FIND, NULL);
		if (kept == NULL)
			return;
		retire_index_info(kept);
		(void) hash_search(kept_index_infos, &relid, HASH_REMOVE, NULL);
		return;
	}
	hash_seq_init(&status, kept_index_infos);
	while ((kept = hash_seq_search(&status)) != NULL)
	{
		retire_index_info(kept);
		(void) hash_search(kept_index_infos, &kept->indexoid, HASH_REMOVE,
						   NULL);
	}
}

/* check_functions_in_node callback: a function a user wrote */
static bool
user_function(Oid func_id, void *context)
{
	return func_id >= FirstNormalObjectId;
}

/*
 * Whether evaluating node may run code a user wrote: a function of a user,
 * a value of a type of a user (its operators or I/O may be a user's), a
 * domain's constraints.
 */
static bool
may_run_user_code(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, CoerceToDomain) || IsA(node, SubPlan) ||
		IsA(node, AlternativeSubPlan))
		return true;
	switch (nodeTag(node))
	{
			/* the nodes that make or hand on a value of a type */
		case T_Var:
		case T_Const:
		case T_Param:
		case T_RelabelType:
		case T_CoerceViaIO:
		case T_ArrayCoerceExpr:
		case T_FuncExpr:
		case T_OpExpr:
		case T_CaseExpr:
		case T_CoalesceExpr:
		case T_ArrayExpr:
			if (exprType(node) >= FirstNormalObjectId)
				return true;
			break;
		default:
			break;
	}
	if (check_functions_in_node(node, user_function, context))
		return true;
	return expression_tree_walker(node, may_run_user_code, context);
}

/*
 * Describe index as BuildIndexInfo does, in a memory context of its own
 * (a child of the current one until it is complete), with its predicate
 * and expressions compiled if they run no user code.
 */
static MemoryContext
build_index_info(Relation index, IndexInfo **info)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	IndexInfo  *ii;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "durable index info",
								ALLOCSET_SMALL_SIZES);
	MemoryContextCopyAndSetIdentifier(cxt, RelationGetRelationName(index));
	oldcxt = MemoryContextSwitchTo(cxt);
	ii = BuildIndexInfo(index);
	if (!may_run_user_code((Node *) ii->ii_Predicate, NULL) &&
		!may_run_user_code((Node *) ii->ii_Expressions, NULL))
	{
		ListCell   *lc;

		/* as ExecPrepareQual and ExecPrepareExprList compile them */
		if (ii->ii_Predicate != NIL)
			ii->ii_PredicateState =
				ExecInitQual((List *) expression_planner((Expr *) ii->ii_Predicate),
							 NULL);
		foreach(lc, ii->ii_Expressions)
			ii->ii_ExpressionsState =
				lappend(ii->ii_ExpressionsState,
						ExecInitExpr(expression_planner((Expr *) lfirst(lc)),
									 NULL));
	}
	MemoryContextSwitchTo(oldcxt);
	*info = ii;
	return cxt;
}

/* The kept description of index (open and locked), built if need be */
static IndexInfo *
kept_index_info(Relation index)
{
	Oid			indexoid = RelationGetRelid(index);
	KeptIndexInfo *kept;
	IndexInfo  *info;
	MemoryContext cxt;
	bool		found;

	if (kept_index_infos == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(KeptIndexInfo);
		ctl.hcxt = CacheMemoryContext;
		kept_index_infos = hash_create("durable index infos", 64, &ctl,
									   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		DurableRegisterRelcacheCallback(forget_index_infos, (Datum) 0);
	}
	kept = hash_search(kept_index_infos, &indexoid, HASH_FIND, NULL);
	if (kept != NULL)
		return kept->info;

	/*
	 * Built before it is entered: building reads the catalogs, which may
	 * read invalidations and run forget_index_infos.  The index's lock keeps
	 * its definition as it is meanwhile.
	 */
	cxt = build_index_info(index, &info);
	kept = hash_search(kept_index_infos, &indexoid, HASH_ENTER, &found);
	Assert(!found);
	MemoryContextSetParent(cxt, CacheMemoryContext);
	kept->cxt = cxt;
	kept->info = info;
	return info;
}

/*
 * Open the indexes of rri's relation for inserts, as ExecOpenIndices(rri,
 * false) does, each with its own copy of its kept description.
 */
void
OpenIndicesKeptInfo(ResultRelInfo *rri)
{
	Relation	rel = rri->ri_RelationDesc;
	List	   *indexoids;
	ListCell   *lc;
	int			n;
	int			i = 0;

	rri->ri_NumIndices = 0;
	if (!RelationGetForm(rel)->relhasindex)
		return;
	indexoids = RelationGetIndexList(rel);
	n = list_length(indexoids);
	if (n == 0)
		return;
	rri->ri_IndexRelationDescs = palloc(sizeof(Relation) * n);
	rri->ri_IndexRelationInfo = palloc(sizeof(IndexInfo *) * n);
	rri->ri_NumIndices = n;
	foreach(lc, indexoids)
	{
		Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);
		IndexInfo  *copy = palloc(sizeof(IndexInfo));

		memcpy(copy, kept_index_info(index), sizeof(IndexInfo));
		copy->ii_AmCache = NULL;
		copy->ii_Context = CurrentMemoryContext;
		rri->ri_IndexRelationDescs[i] = index;
		rri->ri_IndexRelationInfo[i] = copy;
		i++;
	}
	list_free(indexoids);
}
