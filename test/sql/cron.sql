-- Cron schedules: parsing and durable.cron_next(schedule, after).
-- 2024-01-15 is a Monday; all times are UTC.
-- (Quietly: an earlier test in the same database may have created it.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS durable;
RESET client_min_messages;
SET timezone = 'UTC';

-- Every minute: the next whole minute strictly after "after".
SELECT after, durable.cron_next('* * * * *', after) AS next
FROM (VALUES ('2024-01-15 10:30:00'::timestamptz),
             ('2024-01-15 10:30:00.000001'),
             ('2024-01-15 10:30:59.999999'),
             ('2024-01-15 10:29:30'),
             ('2024-01-15 10:30:00-05')) AS t(after);

-- Single values, ranges, lists and steps.
SELECT schedule, after, durable.cron_next(schedule, after) AS next
FROM (VALUES ('45 * * * *', '2024-01-15 10:30:00'::timestamptz),
             ('45 * * * *', '2024-01-15 10:50:00'),
             ('0 12 * * *', '2024-01-15 10:30:00'),
             ('0 9 * * *', '2024-01-15 10:30:00'),
             ('10-20 * * * *', '2024-01-15 10:15:00'),
             ('10-20 * * * *', '2024-01-15 10:30:00'),
             ('* 9-17 * * *', '2024-01-15 18:00:00'),
             ('5,35,50 * * * *', '2024-01-15 10:30:00'),
             ('5,35,50 * * * *', '2024-01-15 10:50:00'),
             ('0 6,18 * * *', '2024-01-15 10:30:00'),
             ('*/15 * * * *', '2024-01-15 10:30:00'),
             ('*/15 * * * *', '2024-01-15 10:45:00'),
             ('10-30/7 * * * *', '2024-01-15 10:25:00'),
             ('50/4 * * * *', '2024-01-15 10:55:00'),
             ('50/4 * * * *', '2024-01-15 10:58:00'),
             ('0 */6 * * *', '2024-01-15 10:30:00'),
             ('0 0 */10 * *', '2024-01-15 10:30:00'),
             ('0 0 5-25/10 * *', '2024-01-15 10:30:00'),
             ('0 0 1 */5 *', '2024-01-15 10:30:00'),
             ('0-5,*/20 * * * *', '2024-01-15 10:30:00'),
             ('07 08 09 10 *', '2024-01-15 10:30:00')) AS t(schedule, after);

-- Fields may be separated, preceded and followed by any blanks.
SELECT durable.cron_next(E'\t 0  0\t1 * *  ', '2024-01-15 10:30:00') AS next;

-- Month names and day-of-week names, case-insensitive; day of week 0 and 7
-- are both Sunday.
SELECT schedule, after, durable.cron_next(schedule, after) AS next
FROM (VALUES ('0 0 1 MAR *', '2024-01-15 10:30:00'::timestamptz),
             ('0 0 1 jan-mar/2 *', '2024-01-15 10:30:00'),
             ('0 0 1 jan-mar/2 *', '2024-03-15 10:30:00'),
             ('0 0 1 Jun,dec *', '2024-07-01 00:00:00'),
             ('0 0 1 OCT/2 *', '2024-01-15 10:30:00'),
             ('0 9 * * MON-FRI', '2024-01-19 10:00:00'),
             ('0 9 * * sat,Sun', '2024-01-15 10:30:00'),
             ('0 9 * * 0', '2024-01-15 10:30:00'),
             ('0 9 * * 7', '2024-01-15 10:30:00'),
             ('0 9 * * 5-7', '2024-01-15 10:30:00'),
             ('0 9 * * 5-7', '2024-01-20 10:30:00'),
             ('0 9 * * Wed/2', '2024-01-18 10:30:00'),
             ('0 9 * * 1-FRI', '2024-01-20 10:30:00')) AS t(schedule, after);

-- Macros.
SELECT schedule, durable.cron_next(schedule, '2024-05-15 10:30:00') AS next
FROM (VALUES ('@yearly'), ('@annually'), ('@monthly'), ('@weekly'),
             ('@daily'), ('@midnight'), ('@hourly'), ('@DAILY'),
             ('  @hourly  ')) AS t(schedule);

-- Day of month and day of week: when both are restricted a day matches if
-- either does; when either begins with "*" both must match (Vixie cron).
SELECT schedule, after, durable.cron_next(schedule, after) AS next
FROM (VALUES ('0 0 1 * MON', '2024-01-29 10:30:00'::timestamptz),
             ('0 0 1 * MON', '2024-02-01 00:00:00'),
             ('0 0 13 * FRI', '2024-01-15 10:30:00'),
             ('0 0 1 * *', '2024-01-15 10:30:00'),
             ('0 0 * * MON', '2024-01-15 10:30:00'),
             ('0 0 */2 * MON', '2024-01-15 10:30:00'),
             ('0 0 1-31/2 * MON', '2024-01-15 10:30:00'),
             ('0 0 10 * */3', '2024-01-15 10:30:00'),
             ('0 0 31 2 MON', '2024-01-15 10:30:00')) AS t(schedule, after);

-- Rolling over hours, days, months and years.
SELECT schedule, after, durable.cron_next(schedule, after) AS next
FROM (VALUES ('* * * * *', '2024-01-31 23:59:30'::timestamptz),
             ('0 0 * * *', '2024-01-31 23:59:30'),
             ('* * * * *', '2024-12-31 23:59:00'),
             ('59 23 31 12 *', '2024-12-31 23:59:00'),
             ('0 0 31 * *', '2024-01-31 10:00:00'),
             ('0 0 31 * *', '2024-03-31 00:00:00'),
             ('30 1 30 * *', '2024-01-30 02:00:00'),
             ('0 0 1 1 *', '2024-01-01 00:00:00'),
             ('15 10 * * *', '2024-01-15 10:14:59')) AS t(schedule, after);

-- Leap days: 2100 is not a leap year.
SELECT schedule, after, durable.cron_next(schedule, after) AS next
FROM (VALUES ('0 0 29 2 *', '2023-03-01 00:00:00'::timestamptz),
             ('0 0 29 2 *', '2024-01-15 10:30:00'),
             ('0 0 29 2 *', '2024-02-29 00:00:00'),
             ('0 0 29 2 *', '2096-03-01 00:00:00'),
             ('0 0 29 FEB SUN', '2024-01-15 10:30:00'),
             ('0 0 29 2 */7', '2024-01-15 10:30:00'),
             ('0 0 * 2 *', '2023-02-28 12:00:00'),
             ('0 0 * 2 *', '2024-02-28 12:00:00')) AS t(schedule, after);

-- The default "after" is durable.now(); the result is a whole minute.
SELECT durable.cron_next('* * * * *') > durable.now() AS in_future,
       date_trunc('minute', durable.cron_next('* * * * *'))
           = durable.cron_next('* * * * *') AS whole_minute;

-- STRICT: a NULL argument gives NULL.
SELECT durable.cron_next(NULL, '2024-01-15 10:30:00') IS NULL AS null_schedule,
       durable.cron_next('* * * * *', NULL) IS NULL AS null_after;

-- Errors: field count.
SELECT durable.cron_next('0 0 0 * * *', '2024-01-15');
SELECT durable.cron_next('0 0 * *', '2024-01-15');
SELECT durable.cron_next('', '2024-01-15');
SELECT durable.cron_next('   ', '2024-01-15');

-- Errors: out of range.
SELECT durable.cron_next('75 * * * *', '2024-01-15');
SELECT durable.cron_next('1,75 * * * *', '2024-01-15');
SELECT durable.cron_next('0 24 * * *', '2024-01-15');
SELECT durable.cron_next('0 0 0 * *', '2024-01-15');
SELECT durable.cron_next('0 0 32 * *', '2024-01-15');
SELECT durable.cron_next('0 0 * 0 *', '2024-01-15');
SELECT durable.cron_next('0 0 * 13 *', '2024-01-15');
SELECT durable.cron_next('0 0 * * 8', '2024-01-15');
SELECT durable.cron_next('0 0 * * 1-8', '2024-01-15');
SELECT durable.cron_next('99999999999999999999 * * * *', '2024-01-15');

-- Errors: reversed ranges.
SELECT durable.cron_next('30-10 * * * *', '2024-01-15');
SELECT durable.cron_next('0 0 * * FRI-MON', '2024-01-15');

-- Errors: steps.
SELECT durable.cron_next('*/0 * * * *', '2024-01-15');
SELECT durable.cron_next('*/60 * * * *', '2024-01-15');
SELECT durable.cron_next('0 0 * */13 *', '2024-01-15');
SELECT durable.cron_next('*/ * * * *', '2024-01-15');
SELECT durable.cron_next('*/x * * * *', '2024-01-15');
SELECT durable.cron_next('1-5/2/3 * * * *', '2024-01-15');

-- Errors: empty elements and missing values.
SELECT durable.cron_next('0,,5 * * * *', '2024-01-15');
SELECT durable.cron_next('5, * * * *', '2024-01-15');
SELECT durable.cron_next(',5 * * * *', '2024-01-15');
SELECT durable.cron_next('1- * * * *', '2024-01-15');

-- Errors: trailing garbage and other syntax.
SELECT durable.cron_next('0 0 * * 1x', '2024-01-15');
SELECT durable.cron_next('*5 * * * *', '2024-01-15');
SELECT durable.cron_next('-5 * * * *', '2024-01-15');
SELECT durable.cron_next('? * * * *', '2024-01-15');
SELECT durable.cron_next('0 0 L * *', '2024-01-15');
SELECT durable.cron_next('0 0 * * 5#3', '2024-01-15');
SELECT durable.cron_next('1.5 * * * *', '2024-01-15');

-- Errors: names.
SELECT durable.cron_next('MON * * * *', '2024-01-15');
SELECT durable.cron_next('0 0 * FOO *', '2024-01-15');
SELECT durable.cron_next('0 0 * * MONDAY', '2024-01-15');
SELECT durable.cron_next('0 0 * MON *', '2024-01-15');
SELECT durable.cron_next('0 0 * * JAN', '2024-01-15');

-- Errors: macros.
SELECT durable.cron_next('@reboot', '2024-01-15');
SELECT durable.cron_next('@every 5m', '2024-01-15');
SELECT durable.cron_next('@daily 0', '2024-01-15');
SELECT durable.cron_next('@', '2024-01-15');

-- Errors: schedules that never fire.
SELECT durable.cron_next('0 0 31 2 *', '2024-01-15');
SELECT durable.cron_next('0 0 30 2 *', '2024-01-15');
SELECT durable.cron_next('0 0 30,31 FEB */2', '2024-01-15');
SELECT durable.cron_next('0 0 31 4,6,9,11 *', '2024-01-15');

-- Errors: no fire time after infinity or past the largest timestamp.
SELECT durable.cron_next('* * * * *', 'infinity');
SELECT durable.cron_next('* * * * *', '-infinity');
SELECT durable.cron_next('0 0 1 1 *', '294276-06-01 00:00:00');
