-- The workers of the benchmarks, made by bench/run.sh and bench/instructions.sh in the
-- database they measure; each registers them on its own queues.
--
-- The worker logic of the activity cycle (activity_cycle.sql): the decisions that
-- answer a decision task, from its history alone.
CREATE FUNCTION bench_decide(task jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN task->'history' @> '[{"eventType": "ActivityTaskCompleted"}]'
        THEN '[{"decisionType": "CompleteWorkflowExecution", "result": {"ok": true}}]'::jsonb
        ELSE '[{"decisionType": "ScheduleActivityTask", "activityId": "a1",
                "activityType": "noop", "input": {}, "startToCloseTimeoutSeconds": 60}]'::jsonb
    END
$$;
-- The same for activity_eager (activity_eager.sql): the activity asks for eager execution.
CREATE FUNCTION bench_decide_eager(task jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN task->'history' @> '[{"eventType": "ActivityTaskCompleted"}]'
        THEN '[{"decisionType": "CompleteWorkflowExecution", "result": {"ok": true}}]'::jsonb
        ELSE '[{"decisionType": "ScheduleActivityTask", "activityId": "a1",
                "activityType": "noop", "input": {}, "startToCloseTimeoutSeconds": 60,
                "requestEagerExecution": true}]'::jsonb
    END
$$;
-- The SQL workflow of the sqlwf workload: three no-op SQL activities in a row, run as
-- an ordinary role (durable runs no code as a superuser).
CREATE ROLE bench_app;
CREATE FUNCTION bench_noop(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE FUNCTION bench_sqlwf(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('bench_noop', '1');
    PERFORM durable.activity('bench_noop', '2');
    PERFORM durable.activity('bench_noop', '3');
    RETURN '{"ok": true}';
END $$;
-- sqlwf_steps: input->'n' no-op SQL activities in a row.
CREATE FUNCTION bench_steps(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    last jsonb;
BEGIN
    FOR i IN 1 .. (input->>'n')::int LOOP
        last := durable.activity('bench_noop', to_jsonb(i));
    END LOOP;
    RETURN jsonb_build_object('last', last);
END $$;
