/*-------------------------------------------------------------------------
 *
 * cron.c
 *	  Cron schedule parsing and next-fire-time calculation.
 *
 * The grammar is standard five-field cron:
 *
 *		minute hour day-of-month month day-of-week
 *
 * Each field is a comma-separated list of elements; an element is "*", a
 * value "a", or a range "a-b", optionally followed by a step "/n".  "a/n"
 * means "a" through the field's maximum in steps of n.  Months may be
 * written JAN-DEC and days of week SUN-SAT (case-insensitive); day of week
 * accepts 0-7, where both 0 and 7 are Sunday.  The macros @yearly,
 * @annually, @monthly, @weekly, @daily, @midnight and @hourly stand for the
 * usual expressions.  Anything else is rejected.
 *
 * Day matching follows Vixie cron: when both day fields are restricted
 * (their text does not begin with "*") a day matches if either field
 * matches; otherwise both must match.
 *
 * All times are UTC.  Schedules that can never fire (such as February 30)
 * are rejected at parse time; CronNextFire also bounds its search to one
 * 400-year Gregorian cycle, after which the calendar repeats.
 *
 * IDENTIFICATION
 *	  src/base/cron.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "base/cron.h"

PG_FUNCTION_INFO_V1(durable_cron_next);

/* Days in one 400-year Gregorian cycle; the calendar repeats after it. */
#define CRON_CYCLE_DAYS		146097

/* Minutes in one day. */
#define CRON_MINS_PER_DAY	(HOURS_PER_DAY * MINS_PER_HOUR)

/* Static description of one of the five fields. */
typedef struct CronFieldSpec
{
	const char *name;			/* field name for messages */
	int			min;			/* smallest value accepted */
	int			max;			/* largest value accepted */
	int			open_max;		/* upper end implied by "*" and "a/n" */
	const char *const *names;	/* three-letter names, or NULL */
	int			names_base;		/* value of names[0] */
	const char *names_hint;		/* hint when a name is not recognized */
} CronFieldSpec;

/* State shared by the parsing routines, for error reports. */
typedef struct CronParseState
{
	const char *expr;			/* the whole expression, as given */
	const char *argname;		/* the argument it came from */
} CronParseState;

static const char *const cron_month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec", NULL
};

static const char *const cron_dow_names[] = {
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL
};

enum
{
	CRON_FIELD_MINUTE,
	CRON_FIELD_HOUR,
	CRON_FIELD_DOM,
	CRON_FIELD_MONTH,
	CRON_FIELD_DOW,
	CRON_NFIELDS
};

static const CronFieldSpec cron_fields[CRON_NFIELDS] = {
	{"minute", 0, 59, 59, NULL, 0, NULL},
	{"hour", 0, 23, 23, NULL, 0, NULL},
	{"day-of-month", 1, 31, 31, NULL, 0, NULL},
	{"month", 1, 12, 12, cron_month_names, 1,
	"Month names are JAN, FEB, MAR, APR, MAY, JUN, JUL, AUG, SEP, OCT, NOV and DEC."},
	{"day-of-week", 0, 7, 6, cron_dow_names, 0,
	"Day-of-week names are SUN, MON, TUE, WED, THU, FRI and SAT."},
};

/* Macro names and the expressions they stand for. */
typedef struct CronMacro
{
	const char *name;
	const char *expansion;
} CronMacro;

static const CronMacro cron_macros[] = {
	{"@yearly", "0 0 1 1 *"},
	{"@annually", "0 0 1 1 *"},
	{"@monthly", "0 0 1 * *"},
	{"@weekly", "0 0 * * 0"},
	{"@daily", "0 0 * * *"},
	{"@midnight", "0 0 * * *"},
	{"@hourly", "0 * * * *"},
	{NULL, NULL}
};

/* The most days each month can have, leap years included. */
static const int cron_month_max_days[MONTHS_PER_YEAR + 1] = {
	0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
};

#define CRON_FIELDS_HINT \
	"A cron schedule has five fields separated by spaces: minute, hour, day-of-month, month and day-of-week, for example \"*/15 * * * *\"."

#define CRON_MACROS_HINT \
	"Use a five-field schedule or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly."

static bool cron_isspace(char c);
static int	cron_parse_value(CronParseState *state, const CronFieldSpec *spec,
							 const char *field, const char **pp, char after);
static uint64 cron_parse_field(CronParseState *state, const CronFieldSpec *spec,
							   const char *field);
static void cron_parse_fields(CronParseState *state, const char *text,
							  CronSchedule *out);
static int	cron_next_bit(uint64 mask, int from);
static bool cron_day_matches(const CronSchedule *sched, int mday, int wday);

/* Whitespace that separates fields. */
static bool
cron_isspace(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		c == '\f' || c == '\v';
}

/*
 * Parse one number or name at *pp within field, advancing *pp past it.
 * "after" is the character that introduced the value ('\0' at the start of
 * an element, or '-'), used to word the message when the value is missing.
 */
static int
cron_parse_value(CronParseState *state, const CronFieldSpec *spec,
				 const char *field, const char **pp, char after)
{
	const char *start = *pp;
	const char *p = start;
	char	   *token;

	if (isdigit((unsigned char) *p))
	{
		int			value = 0;

		while (isdigit((unsigned char) *p))
		{
			/* saturate; anything this large is out of range anyway */
			if (value < 100000)
				value = value * 10 + (*p - '0');
			p++;
		}
		if (value >= spec->min && value <= spec->max)
		{
			*pp = p;
			return value;
		}

		token = pnstrdup(start, p - start);
		if (strcmp(token, field) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s \"%s\"", state->argname, state->expr),
					 errdetail("The %s field \"%s\" is out of range %d-%d.",
							   spec->name, field, spec->min, spec->max)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s \"%s\"", state->argname, state->expr),
					 errdetail("The value %s in the %s field \"%s\" is out of range %d-%d.",
							   token, spec->name, field, spec->min, spec->max)));
	}

	if (isalpha((unsigned char) *p))
	{
		while (isalpha((unsigned char) *p))
			p++;
		token = pnstrdup(start, p - start);

		if (spec->names == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s \"%s\"", state->argname, state->expr),
					 errdetail("The %s field \"%s\" contains \"%s\", which is not a number.",
							   spec->name, field, token),
					 errhint("Only the month and day-of-week fields accept names.")));

		for (int i = 0; spec->names[i] != NULL; i++)
		{
			if (pg_strcasecmp(token, spec->names[i]) == 0)
			{
				*pp = p;
				return spec->names_base + i;
			}
		}

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s \"%s\"", state->argname, state->expr),
				 errdetail("The %s field \"%s\" contains the unknown name \"%s\".",
						   spec->name, field, token),
				 errhint("%s", spec->names_hint)));
	}

	if (*p == '\0' || *p == ',')
	{
		if (after == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s \"%s\"", state->argname, state->expr),
					 errdetail("The %s field \"%s\" has an empty list element.",
							   spec->name, field),
					 errhint(CRON_FIELDS_HINT)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s \"%s\"", state->argname, state->expr),
					 errdetail("The %s field \"%s\" is missing a value after \"%c\".",
							   spec->name, field, after),
					 errhint(CRON_FIELDS_HINT)));
	}

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid %s \"%s\"", state->argname, state->expr),
			 errdetail("The %s field \"%s\" has unexpected text at \"%s\".",
					   spec->name, field, p),
			 errhint(CRON_FIELDS_HINT)));
	pg_unreachable();
}

/* Parse one field's text into a bitmask of the values it selects. */
static uint64
cron_parse_field(CronParseState *state, const CronFieldSpec *spec,
				 const char *field)
{
	const char *p = field;
	uint64		mask = 0;

	for (;;)
	{
		int			lo;
		int			hi;
		int			step = 1;

		if (*p == '*')
		{
			lo = spec->min;
			hi = spec->open_max;
			p++;
		}
		else
		{
			lo = cron_parse_value(state, spec, field, &p, '\0');
			if (*p == '-')
			{
				p++;
				hi = cron_parse_value(state, spec, field, &p, '-');
				if (hi < lo)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid %s \"%s\"", state->argname, state->expr),
							 errdetail("The %s field \"%s\" has a range whose start is greater than its end.",
									   spec->name, field),
							 errhint("Write ranges from low to high; for a range that wraps around, use a list of two ranges such as \"22-23,0-2\".")));
			}
			else if (*p == '/')
				hi = Max(lo, spec->open_max);
			else
				hi = lo;
		}

		if (*p == '/')
		{
			const char *start = ++p;

			if (!isdigit((unsigned char) *p))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid %s \"%s\"", state->argname, state->expr),
						 errdetail("The %s field \"%s\" is missing a step after \"/\".",
								   spec->name, field),
						 errhint(CRON_FIELDS_HINT)));
			step = 0;
			while (isdigit((unsigned char) *p))
			{
				if (step < 100000)
					step = step * 10 + (*p - '0');
				p++;
			}
			if (step < 1 || step > spec->max)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid %s \"%s\"", state->argname, state->expr),
						 errdetail("The step %s in the %s field \"%s\" is out of range 1-%d.",
								   pnstrdup(start, p - start), spec->name,
								   field, spec->max)));
		}

		for (int v = lo; v <= hi; v += step)
			mask |= UINT64CONST(1) << v;

		if (*p == ',')
		{
			p++;
			continue;
		}
		if (*p == '\0')
			break;

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s \"%s\"", state->argname, state->expr),
				 errdetail("The %s field \"%s\" has unexpected text at \"%s\".",
						   spec->name, field, p),
				 errhint(CRON_FIELDS_HINT)));
	}

	return mask;
}

/* Split a five-field expression and parse each field into *out. */
static void
cron_parse_fields(CronParseState *state, const char *text, CronSchedule *out)
{
	char	   *copy = pstrdup(text);
	char	   *fields[CRON_NFIELDS];
	int			nfields = 0;
	char	   *p = copy;
	uint64		masks[CRON_NFIELDS];

	for (;;)
	{
		while (cron_isspace(*p))
			p++;
		if (*p == '\0')
			break;
		if (nfields < CRON_NFIELDS)
			fields[nfields] = p;
		nfields++;
		while (*p != '\0' && !cron_isspace(*p))
			p++;
		if (*p != '\0')
			*p++ = '\0';
	}

	if (nfields != CRON_NFIELDS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s \"%s\"", state->argname, state->expr),
				 errdetail_plural("The schedule has %d field, not 5.",
								  "The schedule has %d fields, not 5.",
								  nfields, nfields),
				 errhint(CRON_FIELDS_HINT)));

	for (int i = 0; i < CRON_NFIELDS; i++)
		masks[i] = cron_parse_field(state, &cron_fields[i], fields[i]);

	/* day of week 7 is Sunday */
	if (masks[CRON_FIELD_DOW] & (UINT64CONST(1) << 7))
		masks[CRON_FIELD_DOW] = (masks[CRON_FIELD_DOW] & 0x7F) | 1;

	out->minutes = masks[CRON_FIELD_MINUTE];
	out->hours = (uint32) masks[CRON_FIELD_HOUR];
	out->days_of_month = (uint32) masks[CRON_FIELD_DOM];
	out->months = (uint16) masks[CRON_FIELD_MONTH];
	out->days_of_week = (uint8) masks[CRON_FIELD_DOW];
	out->dom_restricted = (fields[CRON_FIELD_DOM][0] != '*');
	out->dow_restricted = (fields[CRON_FIELD_DOW][0] != '*');

	/*
	 * Unless the day fields are ORed together, some selected month must have
	 * some selected day of month, or the schedule never fires.  When it does
	 * have one, every weekday falls on that date somewhere in the 400-year
	 * cycle, so the day-of-week field cannot make it impossible.
	 */
	if (!(out->dom_restricted && out->dow_restricted))
	{
		bool		possible = false;

		for (int month = 1; month <= MONTHS_PER_YEAR && !possible; month++)
		{
			uint32		days_in_month;

			if (!(out->months & (1 << month)))
				continue;
			/* bits 1..max for this month */
			days_in_month = (uint32) ((UINT64CONST(1) << (cron_month_max_days[month] + 1)) - 2);
			if (out->days_of_month & days_in_month)
				possible = true;
		}

		if (!possible)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s \"%s\"", state->argname, state->expr),
					 errdetail("The schedule never fires: no selected month has any of the selected days of month."),
					 errhint("February has at most 29 days; April, June, September and November have 30.")));
	}

	pfree(copy);
}

/*
 * Parse expr into *out.
 *
 * On error, ereport(ERROR) with a message naming argname, the SQL-level
 * argument or JSON key the expression came from.
 */
void
CronParse(const char *expr, const char *argname, CronSchedule *out)
{
	CronParseState state;
	const char *p = expr;

	state.expr = expr;
	state.argname = argname;

	while (cron_isspace(*p))
		p++;

	if (*p == '@')
	{
		const char *start = p;
		char	   *name;

		while (*p != '\0' && !cron_isspace(*p))
			p++;
		name = pnstrdup(start, p - start);
		while (cron_isspace(*p))
			p++;
		if (*p != '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s \"%s\"", argname, expr),
					 errdetail("The macro \"%s\" must be the whole schedule.",
							   name),
					 errhint(CRON_MACROS_HINT)));

		for (int i = 0; cron_macros[i].name != NULL; i++)
		{
			if (pg_strcasecmp(name, cron_macros[i].name) == 0)
			{
				cron_parse_fields(&state, cron_macros[i].expansion, out);
				return;
			}
		}

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s \"%s\"", argname, expr),
				 errdetail("The macro \"%s\" is not supported.", name),
				 errhint(CRON_MACROS_HINT)));
	}

	cron_parse_fields(&state, expr, out);
}

/* The lowest set bit of mask at or above from, or -1 if there is none. */
static int
cron_next_bit(uint64 mask, int from)
{
	if (from >= 64)
		return -1;
	mask >>= from;
	if (mask == 0)
		return -1;
	return from + pg_rightmost_one_pos64(mask);
}

/* Does the schedule's day test accept this day of month and weekday? */
static bool
cron_day_matches(const CronSchedule *sched, int mday, int wday)
{
	bool		dom = (sched->days_of_month & ((uint32) 1 << mday)) != 0;
	bool		dow = (sched->days_of_week & (1 << wday)) != 0;

	if (sched->dom_restricted && sched->dow_restricted)
		return dom || dow;
	return dom && dow;
}

/*
 * The first fire time strictly after "after", at a whole minute, UTC.
 *
 * Months, days and hours that cannot match are skipped whole, so the cost
 * is at most a few operations per day scanned.  The search is bounded by
 * one 400-year Gregorian cycle; CronParse rejects schedules that never
 * fire, so the bound is a safeguard rather than an expected outcome.
 */
TimestampTz
CronNextFire(const CronSchedule *sched, TimestampTz after)
{
	int64		minutes;
	int64		day;
	int			minute_of_day;
	int			jd;
	int			limit_jd;
	int			year;
	int			month;
	int			mday;
	int			hour;
	int			minute;

	if (TIMESTAMP_NOT_FINITE(after))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("A cron schedule has no fire time after an infinite timestamp.")));

	/* the next whole minute strictly after "after" */
	minutes = after / USECS_PER_MINUTE;
	if (after % USECS_PER_MINUTE < 0)
		minutes--;
	minutes++;

	day = minutes / CRON_MINS_PER_DAY;
	minute_of_day = (int) (minutes % CRON_MINS_PER_DAY);
	if (minute_of_day < 0)
	{
		minute_of_day += CRON_MINS_PER_DAY;
		day--;
	}

	jd = (int) (day + POSTGRES_EPOCH_JDATE);
	hour = minute_of_day / MINS_PER_HOUR;
	minute = minute_of_day % MINS_PER_HOUR;
	limit_jd = jd + CRON_CYCLE_DAYS;
	j2date(jd, &year, &month, &mday);

	while (jd <= limit_jd)
	{
		int			h;
		int			m;

		CHECK_FOR_INTERRUPTS();

		if (jd >= TIMESTAMP_END_JULIAN)
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("timestamp out of range"),
					 errdetail("The next fire time of the cron schedule is past the largest timestamp.")));

		if (!(sched->months & (1 << month)))
		{
			/* skip to the first day of the next month */
			if (++month > MONTHS_PER_YEAR)
			{
				month = 1;
				year++;
			}
			mday = 1;
			jd = date2j(year, month, mday);
			hour = minute = 0;
			continue;
		}

		h = -1;
		m = -1;
		if (cron_day_matches(sched, mday, j2day(jd)))
		{
			h = cron_next_bit(sched->hours, hour);
			if (h == hour)
			{
				m = cron_next_bit(sched->minutes, minute);
				if (m < 0)
					h = cron_next_bit(sched->hours, hour + 1);
			}
			if (h >= 0 && m < 0)
				m = cron_next_bit(sched->minutes, 0);
		}

		if (h >= 0 && m >= 0)
			return ((int64) (jd - POSTGRES_EPOCH_JDATE) * CRON_MINS_PER_DAY +
					h * MINS_PER_HOUR + m) * USECS_PER_MINUTE;

		/* nothing left today; try the start of tomorrow */
		jd++;
		j2date(jd, &year, &month, &mday);
		hour = minute = 0;
	}

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("cron schedule never fires"),
			 errdetail("No fire time was found within 400 years.")));
	pg_unreachable();
}

/*
 * durable.cron_next(schedule text, after timestamptz) RETURNS timestamptz
 *
 * The first time strictly after "after" at which the schedule fires.
 */
Datum
durable_cron_next(PG_FUNCTION_ARGS)
{
	char	   *expr = text_to_cstring(PG_GETARG_TEXT_PP(0));
	TimestampTz after = PG_GETARG_TIMESTAMPTZ(1);
	CronSchedule sched;

	CronParse(expr, "schedule", &sched);
	PG_RETURN_TIMESTAMPTZ(CronNextFire(&sched, after));
}
