/*-------------------------------------------------------------------------
 *
 * cron.h
 *	  Cron schedule parsing and next-fire-time calculation.
 *
 * A schedule is a standard five-field cron expression (minute, hour,
 * day of month, month, day of week) or one of the macros @yearly,
 * @annually, @monthly, @weekly, @daily, @midnight and @hourly.  Times are
 * evaluated in UTC.
 *
 * IDENTIFICATION
 *	  src/base/cron.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_CRON_H
#define DURABLE_CRON_H

#include "datatype/timestamp.h"

/*
 * A parsed schedule: one bitmask per field, bit N set when value N matches.
 *
 * minutes uses bits 0-59, hours bits 0-23, days_of_month bits 1-31, months
 * bits 1-12 and days_of_week bits 0-6 (0 is Sunday; a 7 in the expression
 * is folded into bit 0).
 *
 * dom_restricted and dow_restricted follow Vixie cron: a day field is
 * unrestricted when its text begins with "*", with or without a step after
 * it.  When both day fields are restricted a day matches if EITHER field
 * matches; otherwise it must match BOTH.
 */
typedef struct CronSchedule
{
	uint64		minutes;
	uint32		hours;
	uint32		days_of_month;
	uint16		months;
	uint8		days_of_week;
	bool		dom_restricted;
	bool		dow_restricted;
} CronSchedule;

/* Parse expr into *out; on error ereport(ERROR) naming argname. */
extern void CronParse(const char *expr, const char *argname, CronSchedule *out);

/* The first fire time strictly after "after", at a whole minute, UTC. */
extern TimestampTz CronNextFire(const CronSchedule *sched, TimestampTz after);

#endif							/* DURABLE_CRON_H */
