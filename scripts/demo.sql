-- durable demo: run by scripts/demo.sh (`make demo`) in a database that has the extension.
-- Starts a few workflows, acts on them the way a client would, and shows what the engine
-- recorded.  No worker runs here: the workflows wait for their first decision task.

\pset pager off
\set VERBOSITY terse

\echo
\echo '== 1. A workflow whose first decision task waits one minute (delay)'
SELECT durable.start_workflow('greet', '{"name": "Ada"}',
    workflow_id => 'demo-delayed', delay => '1 minute') AS run_id;

\echo
\echo '== 2. A workflow retried up to 3 times, 1 s after the first failure, then 2 s'
SELECT durable.retry_policy('1 second', maximum_attempts => 3) AS retry_policy;
SELECT durable.start_workflow('charge', '{"orderId": 17, "amount": 42.50}',
    workflow_id => 'demo-retry',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 3)) AS run_id;

\echo
\echo '== 3. A workflow that receives a signal'
SELECT durable.start_workflow('approval', '{"document": "budget-2025"}',
    workflow_id => 'demo-signal') AS run_id;
SELECT durable.signal_workflow('demo-signal', 'approve', '{"by": "ops"}');

\echo
\echo '== 4. A workflow canceled by its client'
SELECT durable.start_workflow('report', '{"month": "2025-01"}',
    workflow_id => 'demo-cancel') AS run_id;
SELECT durable.cancel_workflow('demo-cancel', 'no longer needed');

\echo
\echo '== 5. A workflow terminated by an operator'
SELECT durable.start_workflow('import', '{"file": "big.csv"}',
    workflow_id => 'demo-terminate') AS run_id;
SELECT durable.terminate_workflow('demo-terminate', 'operator request', '{"ticket": 7}');

\echo
\echo '== What the engine knows: describe_workflow and get_history of each'

\echo '-- demo-delayed'
SELECT jsonb_pretty(durable.describe_workflow('demo-delayed')) AS "demo-delayed";
SELECT * FROM durable.get_history('demo-delayed');

\echo '-- demo-retry'
SELECT jsonb_pretty(durable.describe_workflow('demo-retry')) AS "demo-retry";
SELECT * FROM durable.get_history('demo-retry');

\echo '-- demo-signal'
SELECT jsonb_pretty(durable.describe_workflow('demo-signal')) AS "demo-signal";
SELECT * FROM durable.get_history('demo-signal');

\echo '-- demo-cancel'
SELECT jsonb_pretty(durable.describe_workflow('demo-cancel')) AS "demo-cancel";
SELECT * FROM durable.get_history('demo-cancel');

\echo '-- demo-terminate'
SELECT jsonb_pretty(durable.describe_workflow('demo-terminate')) AS "demo-terminate";
SELECT * FROM durable.get_history('demo-terminate');
