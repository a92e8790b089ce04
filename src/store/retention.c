/*-------------------------------------------------------------------------
 *
 * retention.c
 *	  Purging closed runs whose namespace's retention has passed.
 *
 * A run is purged, with its history, buffered events, attempt log, pending
 * children rows, the requests from other nodes it received and whatever
 * else names it, once it has been closed for
 * longer than its namespace's retention.  Each run of a chain goes by its
 * own close time; a running run is never touched, nor a closed one that
 * still has timers (a close policy or a signal still to deliver).  Runs are
 * taken oldest first, a bounded batch per call, with SKIP LOCKED, so that a
 * purge never waits for the engine nor the engine for a purge.  The
 * background worker purges a batch a minute (bgw/timer_worker.c); without it, call
 * durable.purge() from pg_cron.
 *
 * Finished batch jobs (durable.batch_jobs, api/batch.c) go the same way:
 * a job completed or canceled longer ago than its namespace's retention is
 * purged with its errors, in the same calls.  A running job is never
 * touched, however old, nor one a slice is working on (SKIP LOCKED).  A
 * job whose namespace was dropped (drop_namespace refuses only while runs
 * are left) goes after the shortest retention of the namespaces left.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/lsyscache.h"

#include "durable.h"
#include "base/clock.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/retention.h"
#include "store/router.h"
#include "store/spi.h"

#define VICTIMS "= ANY ((SELECT ids FROM victim_ids)::uuid[])"

/*
 * A namespace's retention in seconds, bounded to 0 .. DURABLE_MAX_DURATION_SECS.
 * create_namespace and alter_namespace refuse more, but a retention stored by
 * 0.2.0 may be anything ('178000000 years'); "now - retention" on it raised
 * 22008 and stopped the purge of every namespace.  date_part and make_interval
 * of a bounded number of seconds cannot overflow.
 */
#define RETENTION_SECS(r) \
	"LEAST(GREATEST(pg_catalog.date_part('epoch', " r "), 0), " \
	DURABLE_MAX_DURATION_SQL ")"

/*
 * One batch: the victims (closed past their namespace's retention, with no
 * timer left), then every row of theirs.  The victims go to each DELETE as an
 * array, so that each table is searched by its index.  RECEIVED is the
 * DELETE of durable.received_requests (0.11.0, router.c), empty in a
 * database not updated yet.
 */
#define PURGE_SQL(RECEIVED) \
	"WITH victims AS (" \
	"  SELECT r.run_id FROM durable.runs r" \
	"  JOIN durable.namespaces n ON n.name = r.namespace" \
	"  WHERE r.status <> 'running'" \
	"  AND r.close_time < $1 - pg_catalog.make_interval(secs =>" \
	"    (SELECT pg_catalog.min(" RETENTION_SECS("retention") ") FROM durable.namespaces))" \
	"  AND r.close_time < $1 - pg_catalog.make_interval(secs => " RETENTION_SECS("n.retention") ")" \
	"  AND NOT EXISTS (SELECT 1 FROM durable.timers t WHERE t.run_id = r.run_id)" \
	"  ORDER BY r.close_time LIMIT $2 FOR UPDATE OF r SKIP LOCKED)," \
	" victim_ids AS (SELECT pg_catalog.array_agg(run_id) AS ids FROM victims)," \
	" h AS (DELETE FROM durable.history WHERE run_id " VICTIMS ")," \
	" b AS (DELETE FROM durable.buffered_events WHERE run_id " VICTIMS ")," \
	" l AS (DELETE FROM durable.activity_attempt_log WHERE run_id " VICTIMS ")," \
	" c AS (DELETE FROM durable.children WHERE parent_run_id " VICTIMS ")," \
	" a AS (DELETE FROM durable.activities WHERE run_id " VICTIMS ")," \
	" u AS (DELETE FROM durable.user_timers WHERE run_id " VICTIMS ")," \
	RECEIVED \
	" r AS (DELETE FROM durable.runs WHERE run_id " VICTIMS " RETURNING 1)" \
	" SELECT pg_catalog.count(*)::integer FROM r"

static KeptPlan purge_plan = {
	NULL, PURGE_SQL(""),
	2, {TIMESTAMPTZOID, INT4OID}
};
static KeptPlan purge_plan_received = {
	NULL, PURGE_SQL(" q AS (DELETE FROM durable.received_requests WHERE target_run_id " VICTIMS "),"),
	2, {TIMESTAMPTZOID, INT4OID}
};

/* Purge up to max_runs closed runs past retention at now; returns how many. */
int
PurgeClosedRuns(TimestampTz now, int max_runs)
{
	Datum		values[2];
	bool		isnull;
	int			n;

	values[0] = TimestampTzGetDatum(now);
	values[1] = Int32GetDatum(max_runs);
	RunPlan(ReceivedRequestsTableExists() ? &purge_plan_received : &purge_plan,
			values, NULL, false, 1);
	n = DatumGetInt32(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return n;
}

/*
 * The finished jobs past their namespace's retention, oldest close first, and
 * their errors (deleted here rather than by the foreign key's cascade, one
 * statement for all of them).  As for the runs, the smallest retention bounds
 * the scan of batch_jobs_closed.
 */
static KeptPlan purge_batches_plan = {
	NULL, "WITH victims AS ("
	"  SELECT b.batch_id FROM durable.batch_jobs b"
	"  LEFT JOIN durable.namespaces n ON n.name = b.namespace"
	"  WHERE b.state <> 'running'"
	"  AND b.close_time < $1 - pg_catalog.make_interval(secs =>"
	"    LEAST((SELECT pg_catalog.min(" RETENTION_SECS("retention") ") FROM durable.namespaces),"
	"          " DURABLE_MAX_DURATION_SQL "))"
	"  AND b.close_time < $1 - pg_catalog.make_interval(secs =>"
	"    COALESCE(" RETENTION_SECS("n.retention") ", 0))"
	"  ORDER BY b.close_time LIMIT $2 FOR UPDATE OF b SKIP LOCKED),"
	" e AS (DELETE FROM durable.batch_job_errors"
	"       WHERE batch_id IN (SELECT batch_id FROM victims)),"
	" j AS (DELETE FROM durable.batch_jobs"
	"       WHERE batch_id IN (SELECT batch_id FROM victims) RETURNING 1)"
	" SELECT pg_catalog.count(*)::integer FROM j",
	2, {TIMESTAMPTZOID, INT4OID}
};

/*
 * Purge up to max_jobs finished batch jobs past retention at now; returns how
 * many.  0 in a database not yet updated to 0.8.0, which has no batch jobs.
 */
int
PurgeFinishedBatches(TimestampTz now, int max_jobs)
{
	Datum		values[2];
	bool		isnull;
	int			n;

	if (!OidIsValid(DurableRelationOid("batch_jobs")))
		return 0;
	values[0] = TimestampTzGetDatum(now);
	values[1] = Int32GetDatum(max_jobs);
	RunPlan(&purge_batches_plan, values, NULL, false, 1);
	n = DatumGetInt32(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return n;
}

PG_FUNCTION_INFO_V1(durable_purge);
/*
 * durable.purge(max_runs): purge closed runs past their retention, and as many
 * finished batch jobs; returns the number of runs.
 */
Datum
durable_purge(PG_FUNCTION_ARGS)
{
	int32		max_runs = PG_GETARG_INT32(0);
	int			n;

	RequireWritableTransaction("durable.purge()");

	if (max_runs <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_runs must be greater than zero")));
	DurableSPIConnect();
	n = PurgeClosedRuns(DurableNow(), max_runs);
	(void) PurgeFinishedBatches(DurableNow(), max_runs);
	DurableSPIFinish();
	PG_RETURN_INT32(n);
}
