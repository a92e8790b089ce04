/*
 * bench/latency.c: wake-up latency of a waiting long poll (the peers' W3 of
 * bench/README.md: starts at a fixed rate into idle waiting workers).
 *
 * WAITERS threads, each on its own connection, loop on
 *     durable.poll_decision_task(QUEUE, identity, 'default', '10s')
 * and answer every task they get with CompleteWorkflowExecution (so that no decision
 * timeout brings a task back).  One producer thread starts workflows on QUEUE at a fixed
 * RATE a second for SECONDS seconds, on an absolute schedule (a late start does not
 * shift the next ones), and records the client-side time just before each
 * start_workflow call and just after it returned (its commit is then done: autocommit).
 * A waiter records the time its poll returned and the task's workflowId.
 *
 * latency = poll return - start_workflow return, matched by workflow id; also
 * reported: poll return - start_workflow call (what the peers' W3 measured: from the
 * enqueue call).  All times are CLOCK_REALTIME in one process.
 *
 * Usage: latency [-w WAITERS] [-r RATE] [-s SECONDS] [-q QUEUE] [-k decision|activity]
 *   Connection: libpq's environment (PGHOST, PGPORT, PGDATABASE, ...).
 *   -k activity: the waiters poll poll_activity_task instead; a decider thread answers
 *   each workflow's first decision task with one ScheduleActivityTask (and the second
 *   with CompleteWorkflowExecution), and the latency runs from that
 *   complete_decision_task's return to the activity poll's return.  (decision is the
 *   default.)
 *
 * Output: one line per figure, and a last line
 *   RESULT n=<matched> missing=<n> answer_errors=<n> p50=<ms> p99=<ms> max=<ms> call_p50=<ms> call_p99=<ms> call_max=<ms>
 * Exit status 1 on a connection or query error, or when a task never arrived.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libpq-fe.h"

#define MAX_WAITERS 64

static int	n_waiters = 4;
static double rate = 50.0;
static double seconds = 20.0;
static const char *queue = "latency";
static int	activity_mode = 0;

static int	n_starts;
static double *t_call;			/* per workflow index: before start_workflow */
static double *t_commit;		/* after start_workflow returned (-1: not yet) */
static double *t_got;			/* when a waiter's poll returned it (-1: never) */
static atomic_int received;
static atomic_int stop_flag;
static atomic_int failed;
static atomic_int answer_errors;
static char run_tag[32];

static PGconn *waiter_conns[MAX_WAITERS];
static PGcancel *waiter_cancels[MAX_WAITERS];

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static PGconn *
connect_db(void)
{
	PGconn	   *conn = PQconnectdb("application_name=durable-latency");

	if (PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "latency: connection failed: %s", PQerrorMessage(conn));
		exit(1);
	}
	return conn;
}

/* Run a statement that must succeed; returns its result (caller clears). */
static PGresult *
exec_ok(PGconn *conn, const char *sql, int nparams, const char *const *params)
{
	PGresult   *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK &&
		PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "latency: %s: %s", sql, PQerrorMessage(conn));
		atomic_store(&failed, 1);
		PQclear(res);
		return NULL;
	}
	return res;
}

/* The index of a workflow id "lat-<tag>-<i>", or -1. */
static int
workflow_index(const char *wid)
{
	size_t		len = strlen(run_tag);
	char	   *end;
	long		i;

	if (strncmp(wid, run_tag, len) != 0)
		return -1;
	i = strtol(wid + len, &end, 10);
	if (*end != '\0' || i < 0 || i >= n_starts)
		return -1;
	return (int) i;
}

static const char *complete_workflow =
"[{\"decisionType\":\"CompleteWorkflowExecution\",\"result\":{}}]";
static const char *schedule_activity =
"[{\"decisionType\":\"ScheduleActivityTask\",\"activityId\":\"a1\","
"\"activityType\":\"noop\",\"input\":{},\"startToCloseTimeoutSeconds\":60}]";

static void *
waiter_main(void *arg)
{
	int			w = (int) (long) arg;
	PGconn	   *conn = waiter_conns[w];
	char		identity[32];
	const char *poll_sql = activity_mode ?
		"SELECT t->>'taskToken', t->>'workflowId' FROM"
		" durable.poll_activity_task($1, $2, 'default', '10s') t" :
		"SELECT t->>'taskToken', t->>'workflowId' FROM"
		" durable.poll_decision_task($1, $2, 'default', '10s') t";

	snprintf(identity, sizeof(identity), "waiter-%d", w);
	while (!atomic_load(&stop_flag))
	{
		const char *params[2] = {queue, identity};
		PGresult   *res = PQexecParams(conn, poll_sql, 2, NULL, params, NULL, NULL, 0);
		double		t = now_s();
		char	   *token;
		int			i;

		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			if (!atomic_load(&stop_flag))
			{
				fprintf(stderr, "latency: poll: %s", PQerrorMessage(conn));
				atomic_store(&failed, 1);
			}
			PQclear(res);
			break;
		}
		if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
		{
			PQclear(res);		/* the wait ended empty: poll again */
			continue;
		}
		i = workflow_index(PQgetvalue(res, 0, 1));
		if (i >= 0 && t_got[i] < 0)
		{
			t_got[i] = t;
			atomic_fetch_add(&received, 1);
		}
		token = strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
		/* Answer it, as a worker would: close the workflow. */
		{
			const char *p[2] = {token, complete_workflow};
			const char *sql = activity_mode ?
				"SELECT durable.complete_activity($1, '{}')" :
				"SELECT durable.complete_decision_task($1, $2::jsonb)";
			PGresult   *r = PQexecParams(conn, sql, activity_mode ? 1 : 2, NULL, p,
											 NULL, NULL, 0);

			/* A worker logs a failed answer (e.g. a stale token) and polls on. */
			if (PQresultStatus(r) != PGRES_TUPLES_OK)
			{
				if (atomic_fetch_add(&answer_errors, 1) < 3)
					fprintf(stderr, "latency: answering a task: %s", PQerrorMessage(conn));
			}
			PQclear(r);
		}
		free(token);
	}
	return NULL;
}

/* -k activity: answers each first decision task with one activity, on its own conn. */
static void *
decider_main(void *arg)
{
	PGconn	   *conn = (PGconn *) arg;

	while (!atomic_load(&stop_flag))
	{
		const char *params[1] = {queue};
		PGresult   *res = exec_ok(conn,
								  "SELECT t->>'taskToken', t->>'workflowId',"
								  " t->'history' @> '[{\"eventType\":\"ActivityTaskCompleted\"}]'"
								  " FROM durable.poll_decision_task($1, 'decider', 'default', '1s') t",
								  1, params);
		const char *p[2];
		int			i;

		if (res == NULL)
			break;
		if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
		{
			PQclear(res);
			continue;
		}
		p[0] = PQgetvalue(res, 0, 0);
		p[1] = strcmp(PQgetvalue(res, 0, 2), "t") == 0 ? complete_workflow : schedule_activity;
		i = workflow_index(PQgetvalue(res, 0, 1));
		{
			double		before = now_s();
			PGresult   *r = exec_ok(conn,
									"SELECT durable.complete_decision_task($1, $2::jsonb)", 2, p);

			/* in activity mode the commit that makes the task is this one */
			if (i >= 0 && p[1] == schedule_activity)
			{
				t_call[i] = before;
				t_commit[i] = now_s();
			}
			PQclear(res);
			if (r == NULL)
				break;
			PQclear(r);
		}
	}
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
pct(double *v, int n, int p)
{
	int			i = (n * p + 99) / 100;

	if (n == 0)
		return -1;
	if (i < 1)
		i = 1;
	return v[i - 1];
}

int
main(int argc, char **argv)
{
	int			opt;
	pthread_t	waiters[MAX_WAITERS];
	pthread_t	decider;
	PGconn	   *producer;
	PGconn	   *decider_conn = NULL;
	double		t0;
	double		*lat, *lat_call;
	int			n = 0, missing = 0;
	int			i;

	while ((opt = getopt(argc, argv, "w:r:s:q:k:")) != -1)
	{
		switch (opt)
		{
			case 'w': n_waiters = atoi(optarg); break;
			case 'r': rate = atof(optarg); break;
			case 's': seconds = atof(optarg); break;
			case 'q': queue = optarg; break;
			case 'k': activity_mode = strcmp(optarg, "activity") == 0; break;
			default:
				fprintf(stderr, "usage: latency [-w waiters] [-r rate] [-s seconds]"
						" [-q queue] [-k decision|activity]\n");
				return 2;
		}
	}
	if (n_waiters < 1 || n_waiters > MAX_WAITERS || rate <= 0 || seconds <= 0)
	{
		fprintf(stderr, "latency: bad arguments\n");
		return 2;
	}
	n_starts = (int) (rate * seconds + 0.5);
	t_call = malloc(sizeof(double) * n_starts);
	t_commit = malloc(sizeof(double) * n_starts);
	t_got = malloc(sizeof(double) * n_starts);
	for (i = 0; i < n_starts; i++)
		t_call[i] = t_commit[i] = t_got[i] = -1;
	snprintf(run_tag, sizeof(run_tag), "lat-%ld-", (long) time(NULL));

	producer = connect_db();
	for (i = 0; i < n_waiters; i++)
	{
		waiter_conns[i] = connect_db();
		waiter_cancels[i] = PQgetCancel(waiter_conns[i]);
		pthread_create(&waiters[i], NULL, waiter_main, (void *) (long) i);
	}
	if (activity_mode)
	{
		decider_conn = connect_db();
		pthread_create(&decider, NULL, decider_main, decider_conn);
	}
	usleep(500 * 1000);			/* let the waiters block in their polls */

	t0 = now_s();
	for (i = 0; i < n_starts && !atomic_load(&failed); i++)
	{
		double		due = t0 + i / rate;
		double		wait = due - now_s();
		char		wid[64];
		const char *params[2] = {wid, queue};
		PGresult   *res;
		double		tc;

		if (wait > 0)
		{
			struct timespec ts = {(time_t) wait, (long) ((wait - (time_t) wait) * 1e9)};

			while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
				;
		}
		snprintf(wid, sizeof(wid), "%s%d", run_tag, i);
		tc = now_s();
		res = exec_ok(producer,
					  "SELECT durable.start_workflow('latency', NULL, $1, $2)", 2, params);
		if (!activity_mode)
		{
			t_call[i] = tc;
			t_commit[i] = now_s();
		}
		if (res)
			PQclear(res);
	}

	/* Wait for the last tasks (at most 10 s), then cancel the polls still waiting. */
	{
		double		deadline = now_s() + 10;

		while (atomic_load(&received) < n_starts && now_s() < deadline &&
			   !atomic_load(&failed))
			usleep(10 * 1000);
	}
	atomic_store(&stop_flag, 1);
	for (i = 0; i < n_waiters; i++)
	{
		char		err[256];

		PQcancel(waiter_cancels[i], err, sizeof(err));
	}
	for (i = 0; i < n_waiters; i++)
	{
		pthread_join(waiters[i], NULL);
		PQfreeCancel(waiter_cancels[i]);
		PQfinish(waiter_conns[i]);
	}
	if (activity_mode)
	{
		pthread_join(decider, NULL);
		PQfinish(decider_conn);
	}
	PQfinish(producer);

	lat = malloc(sizeof(double) * n_starts);
	lat_call = malloc(sizeof(double) * n_starts);
	for (i = 0; i < n_starts; i++)
	{
		if (t_got[i] < 0 || t_commit[i] < 0)
		{
			missing++;
			continue;
		}
		lat[n] = (t_got[i] - t_commit[i]) * 1000.0;
		lat_call[n] = (t_got[i] - t_call[i]) * 1000.0;
		n++;
	}
	qsort(lat, n, sizeof(double), cmp_double);
	qsort(lat_call, n, sizeof(double), cmp_double);
	printf("%s: %d waiters, %d starts at %.0f/s over %.0f s, %d matched, %d missing\n",
		   activity_mode ? "activity poll" : "decision poll",
		   n_waiters, n_starts, rate, seconds, n, missing);
	if (atomic_load(&answer_errors) > 0)
		printf("answers that failed (complete_decision_task / complete_activity): %d\n",
			   atomic_load(&answer_errors));
	printf("from the commit's return: min %.3f p50 %.3f p99 %.3f max %.3f ms\n",
		   n ? lat[0] : -1, pct(lat, n, 50), pct(lat, n, 99), n ? lat[n - 1] : -1);
	printf("from the call:            min %.3f p50 %.3f p99 %.3f max %.3f ms\n",
		   n ? lat_call[0] : -1, pct(lat_call, n, 50), pct(lat_call, n, 99),
		   n ? lat_call[n - 1] : -1);
	printf("RESULT n=%d missing=%d answer_errors=%d p50=%.3f p99=%.3f max=%.3f call_p50=%.3f call_p99=%.3f call_max=%.3f\n",
		   n, missing, atomic_load(&answer_errors), pct(lat, n, 50), pct(lat, n, 99), n ? lat[n - 1] : -1,
		   pct(lat_call, n, 50), pct(lat_call, n, 99), n ? lat_call[n - 1] : -1);
	return (atomic_load(&failed) || missing > 0) ? 1 : 0;
}
