/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The engine's clock: the wall clock, or durable.test_time when set.
 *
 * Every time the engine records or compares (event times, due times,
 * deadlines) comes from DurableNow(), so that a test sets durable.test_time
 * and calls durable.tick() instead of sleeping.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "base/clock.h"

/* The range of durable.test_time: [1970-01-01, 10000-01-01) UTC */
#define TEST_TIME_MIN \
	((TimestampTz) (UNIX_EPOCH_JDATE - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)
#define TEST_TIME_END \
	((TimestampTz) (date2j(10000, 1, 1) - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)

/* durable.test_time: the string as set, and its parsed value */
char	   *durable_test_time_string = NULL;
static bool test_time_set = false;
static TimestampTz test_time_value = 0;

/* Parse a timestamptz without raising errors, for the GUC check hook. */
static bool
parse_timestamptz_quietly(const char *str, TimestampTz *result)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz;
	struct pg_tm tt;
	fsec_t		fsec;

	if (strlen(str) >= MAXDATELEN)
		return false;
	if (ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;
	if (DecodeDateTime(field, ftype, nf, &dtype, &tt, &fsec, &tz) != 0)
		return false;
	if (dtype != DTK_DATE)
		return false;
	if (tm2timestamp(&tt, fsec, &tz, result) != 0)
		return false;
	return IS_VALID_TIMESTAMP(*result);
}

/* Check hook of durable.test_time: empty or a valid timestamptz. */
bool
CheckTestTime(char **newval, void **extra, GucSource source)
{
	TimestampTz *parsed;

	if (*newval == NULL || (*newval)[0] == '\0')
	{
		*extra = NULL;
		return true;
	}
	parsed = (TimestampTz *) malloc(sizeof(TimestampTz));
	if (parsed == NULL)
		return false;
	if (!parse_timestamptz_quietly(*newval, parsed))
	{
		free(parsed);
		GUC_check_errdetail("durable.test_time must be empty or a timestamp with time zone.");
		return false;
	}

	/*
	 * Years 1970 to 9999 only: with every duration at most 100 years
	 * (util.c), deadlines computed from the clock then stay far from the
	 * ends of timestamptz, in C and in the engine's SQL alike.
	 */
	if (*parsed < TEST_TIME_MIN || *parsed >= TEST_TIME_END)
	{
		free(parsed);
		GUC_check_errdetail("durable.test_time must be from 1970-01-01 to 9999-12-31.");
		return false;
	}
	*extra = parsed;
	return true;
}

/* Assign hook of durable.test_time: freeze or unfreeze the clock. */
void
AssignTestTime(const char *newval, void *extra)
{
	if (extra == NULL)
		test_time_set = false;
	else
	{
		test_time_set = true;
		test_time_value = *(TimestampTz *) extra;
	}
}

/* The engine's clock: durable.test_time when set, else the wall clock. */
TimestampTz
DurableNow(void)
{
	if (test_time_set)
		return test_time_value;
	return GetCurrentTimestamp();
}
