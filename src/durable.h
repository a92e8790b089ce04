/*-------------------------------------------------------------------------
 *
 * durable.h
 *	  The engine's SQLSTATEs and the bounds it puts on what users give it.
 *
 * Each module has its own header next to it (src/README.md); this one holds
 * only what every layer may need to raise or check.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_H
#define DURABLE_H

/* The engine's SQLSTATEs (docs/errors.md) */
#define ERRCODE_DURABLE_ALREADY_STARTED		MAKE_SQLSTATE('W','F','0','0','1')
#define ERRCODE_DURABLE_NOT_FOUND			MAKE_SQLSTATE('W','F','0','0','2')
#define ERRCODE_DURABLE_NOT_RUNNING			MAKE_SQLSTATE('W','F','0','0','3')
#define ERRCODE_DURABLE_STALE_TOKEN			MAKE_SQLSTATE('W','F','0','0','5')
#define ERRCODE_DURABLE_LIMIT_EXCEEDED		MAKE_SQLSTATE('W','F','0','0','6')
#define ERRCODE_DURABLE_ACTIVITY_FAILED		MAKE_SQLSTATE('W','F','0','0','7')
#define ERRCODE_DURABLE_CANCELED			MAKE_SQLSTATE('W','F','0','0','8')

/* Longest namespace, workflow id, type, task queue or signal name, in bytes */
#define DURABLE_MAX_NAME_LEN	1000
/* The bytes of a concurrency key (docs/task-queues.md) */
#define DURABLE_MAX_KEY_LEN		255

/*
 * Longest duration a user may give (a timeout, delay, wait, retention, retry
 * interval): 100 years of 365.25 days, 36525 days, in seconds.  With the
 * engine's clock bounded (durable.test_time) it keeps every deadline far
 * from the ends of timestamptz and interval (docs/errors.md "Bounds on durations and numbers").
 */
#define DURABLE_MAX_DURATION_SECS	3155760000.0
#define DURABLE_MAX_DURATION_TEXT	"100 years (36525 days)"
#define DURABLE_MAX_DURATION_SQL	"3155760000::float8"
/* Largest backoffCoefficient of a retry policy */
#define DURABLE_MAX_BACKOFF_COEFFICIENT	1000.0

#endif							/* DURABLE_H */
