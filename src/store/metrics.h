/*-------------------------------------------------------------------------
 *
 * metrics.h
 *	  The counters of durable.metrics, in shared memory (metrics.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_METRICS_H
#define DURABLE_STORE_METRICS_H

extern int	durable_max_metric_queues;
extern int	durable_metric_idle_timeout;

extern void MetricsInstallHooks(void);
/* Histogram buckets (metrics.c), besides +Inf */
#define METRIC_BUCKETS	15
#define MV_HIST_WIDTH	(METRIC_BUCKETS + 2)	/* buckets, +Inf, sum */

typedef enum MetricValue
{
	MV_WORKFLOWS_STARTED,
	MV_CLOSED_COMPLETED,
	MV_CLOSED_FAILED,
	MV_CLOSED_CANCELED,
	MV_CLOSED_TERMINATED,
	MV_CLOSED_CONTINUED_AS_NEW,
	MV_CLOSED_TIMED_OUT,
	MV_DECISION_STARTED,
	MV_DECISION_COMPLETED,
	MV_DECISION_FAILED,
	MV_DECISION_TIMED_OUT,
	MV_ACTIVITY_STARTED,
	MV_ACTIVITY_COMPLETED,
	MV_ACTIVITY_FAILED,
	MV_ACTIVITY_TIMED_OUT,
	MV_ACTIVITY_CANCELED,
	MV_RETRIES_ACTIVITY,
	MV_RETRIES_WORKFLOW,
	MV_TIMERS_FIRED,
	MV_HIST_FIRST
} MetricValue;

#define MH_DECISION_SCHEDULE_TO_START	0
#define MH_ACTIVITY_SCHEDULE_TO_START	1
#define MH_TIMER_LATENESS				2
#define MV_COUNT	(MV_HIST_FIRST + 3 * MV_HIST_WIDTH)

extern Size MetricsShmemSize(void);
extern void MetricsShmemRequest(void);
extern void MetricsShmemInit(void);
extern void MetricsAdd(const char *namespace, const char *task_queue,
					   MetricValue value, uint64 delta);
extern void MetricsObserve(const char *namespace, const char *task_queue,
						   int hist, double seconds);
extern void MetricsCountEvents(const char *namespace, const char *task_queue,
							   int n, char *const *types);

#endif							/* DURABLE_STORE_METRICS_H */
