/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The engine's clock (clock.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BASE_CLOCK_H
#define DURABLE_BASE_CLOCK_H

#include "datatype/timestamp.h"
#include "utils/guc.h"

extern char *durable_test_time_string;

extern TimestampTz DurableNow(void);
extern bool CheckTestTime(char **newval, void **extra, GucSource source);
extern void AssignTestTime(const char *newval, void *extra);

#endif							/* DURABLE_BASE_CLOCK_H */
