-- A SQL workflow function replays a history that an external worker began: the
-- numbers that its decisions wrote (a marker's details.id, a child's control) are
-- whatever that worker sent.  A number that cannot be a command of the code
-- (huge, negative, fractional) is history the code did not make: the decision
-- task fails as non-deterministic, no internal or numeric error escapes, and
-- the run is still there to be fixed.
BEGIN;
SELECT plan(2);
SELECT t.at('2026-01-01 00:00:00+00');

CREATE ROLE replay_app;
CREATE FUNCTION public.replay_wf(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.side_effect('"x"');
END $$;
GRANT EXECUTE ON FUNCTION public.replay_wf(jsonb) TO replay_app;

-- External workers answer the first decision task of each run with a marker or a
-- child whose numbers are out of any command's range.
SELECT durable.start_workflow('rf', NULL, 'huge', task_queue => 'rq') IS NOT NULL;
SELECT t.decide('huge', '[{"decisionType": "RecordMarker", "markerName": "SideEffect",
    "details": {"id": 2000000000}}]', 'rq') IS NOT NULL;
SELECT durable.start_workflow('rf', NULL, 'enormous', task_queue => 'rq') IS NOT NULL;
SELECT t.decide('enormous', '[{"decisionType": "StartChildWorkflowExecution", "workflowId": "c1",
    "workflowType": "c", "control": 1e30}]', 'rq') IS NOT NULL;

-- The type is now run by the executors; a signal makes a decision task of each run.
SELECT durable.register_workflow('rf', 'public.replay_wf(jsonb)', task_queue => 'rq',
                                 run_as => 'replay_app');
SELECT durable.signal_workflow(w, 'go') FROM unnest(ARRAY['huge', 'enormous']) w;
SELECT lives_ok($$SELECT durable.run_tasks()$$, 'the replay of foreign numbers raises nothing');
SELECT is((SELECT array_agg(t.attrs(w, 'DecisionTaskFailed')->>'cause' ORDER BY w)
             FROM unnest(ARRAY['enormous', 'huge']) w),
          ARRAY['NonDeterministicWorkflow', 'NonDeterministicWorkflow'],
          'each decision task fails as non-deterministic');

SELECT * FROM finish();
ROLLBACK;
