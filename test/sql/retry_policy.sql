-- durable.retry_policy() and the validation every policy goes through.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS durable;
RESET client_min_messages;

-- Defaults: coefficient 2, maximum 100 x initial.
SELECT durable.retry_policy('1 second', maximum_attempts => 10);
SELECT durable.retry_policy('1.5 seconds', 3.0, '1 minute', '1 hour', 0, ARRAY['BadInput', 'Fraud']);
SELECT durable.retry_policy('1 minute', 1.0, expiration_interval => '1 day');
SELECT durable.retry_policy('1 second', maximum_attempts => 1);

-- Bad policies, each bad field named (docs/api.md "Retry policies").
SELECT durable.retry_policy('1 second');
SELECT durable.retry_policy('0', maximum_attempts => 3);
SELECT durable.retry_policy('-1 second', maximum_attempts => 3);
SELECT durable.retry_policy('1 second', 0.9, maximum_attempts => 3);
SELECT durable.retry_policy('1 second', 'NaN', maximum_attempts => 3);
SELECT durable.retry_policy('10 seconds', maximum_interval => '5 seconds', maximum_attempts => 3);
SELECT durable.retry_policy('1 second', maximum_attempts => -1);
SELECT durable.retry_policy('1 second', expiration_interval => '-1 hour');
SELECT durable.retry_policy(NULL, maximum_attempts => 3);
SELECT durable.retry_policy('1 second', NULL, maximum_attempts => 3);
SELECT durable.retry_policy('1 second', maximum_attempts => NULL);
SELECT durable.retry_policy('1 second', maximum_attempts => 3, non_retryable_error_reasons => ARRAY[NULL]);

-- The JSON form, as start_workflow takes it: unknown and mistyped fields.
SELECT count(*) AS runs_before FROM durable.runs \gset
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "maximumAttempts": 2, "maxAttempts": 3}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": "1s", "maximumAttempts": 2}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 0, "maximumAttempts": 2}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "backoffCoefficient": 0.5, "maximumAttempts": 2}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 5, "maximumIntervalInSeconds": 1, "maximumAttempts": 2}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "maximumAttempts": 2.5}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "maximumAttempts": -2}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "expirationIntervalInSeconds": -1}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "maximumAttempts": 2, "nonRetriableErrorReasons": "x"}');
SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "maximumAttempts": 2, "nonRetriableErrorReasons": [1]}');
SELECT durable.start_workflow('t', retry_policy => '"fast"');
SELECT count(*) = :runs_before AS nothing_written FROM durable.runs;

-- A valid JSON policy is stored normalised (defaults filled in).
SELECT durable.start_workflow('t', NULL, 'rp-1',
    retry_policy => '{"initialIntervalInSeconds": 0.5, "expirationIntervalInSeconds": 60}') IS NOT NULL AS started;
SELECT retry_policy FROM durable.runs WHERE workflow_id = 'rp-1';

-- The delays: min(initial * coefficient^(n-1), maximum).
SELECT n, durable.retry_delay(durable.retry_policy('1 second', maximum_interval => '10 seconds', maximum_attempts => 10), n)
  FROM generate_series(1, 6) n;
SELECT n, durable.retry_delay('{"initialIntervalInSeconds": 2, "backoffCoefficient": 1, "maximumAttempts": 3}', n)
  FROM generate_series(1, 3) n;
SELECT durable.retry_delay(durable.retry_policy('1 second', maximum_attempts => 10), 1000) AS capped_at_100x;
SELECT durable.retry_delay(durable.retry_policy('1 second', maximum_attempts => 10), 0);
