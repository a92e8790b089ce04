-- Helpers of the pgTAP tests, loaded by scripts/test.sh into every test database
-- (schema t) after CREATE EXTENSION durable and pgtap.

CREATE SCHEMA t;

CREATE FUNCTION t.at(ts text) RETURNS void LANGUAGE sql AS
    $$ SELECT set_config('durable.test_time', ts, true) $$;

-- Poll the next decision task of a queue, check its workflow, answer it.
CREATE FUNCTION t.decide(wid text, decisions jsonb, queue text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE t jsonb;
BEGIN
    t := durable.poll_decision_task(COALESCE(queue, wid));
    IF t IS NULL THEN RAISE EXCEPTION 'no decision task for %', wid; END IF;
    IF t->>'workflowId' <> wid THEN
        RAISE EXCEPTION 'decision task of % instead of %', t->>'workflowId', wid;
    END IF;
    PERFORM durable.complete_decision_task(t->>'taskToken', decisions);
    RETURN t;
END $$;

-- The event types of a run's history, in order.
CREATE FUNCTION t.events(wid text, rid uuid DEFAULT NULL, from_id int DEFAULT 1) RETURNS text[]
LANGUAGE sql AS $$
    SELECT COALESCE(array_agg(event_type ORDER BY event_id), '{}') FROM durable.get_history(wid, run_id => rid)
     WHERE event_id >= from_id $$;

-- The attributes of the n-th event of a type.
CREATE FUNCTION t.attrs(wid text, etype text, n int DEFAULT 1, rid uuid DEFAULT NULL)
RETURNS jsonb LANGUAGE sql AS $$
    SELECT attributes FROM durable.get_history(wid, run_id => rid) WHERE event_type = etype
     ORDER BY event_id OFFSET n - 1 LIMIT 1 $$;

-- describe_workflow's first pending activity.
CREATE FUNCTION t.pending(wid text) RETURNS jsonb LANGUAGE sql AS
    $$ SELECT durable.describe_workflow(wid)->'pendingActivities'->0 $$;

-- A ScheduleActivityTask decision.
CREATE FUNCTION t.sched(act text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS
    $$ SELECT jsonb_build_object('decisionType', 'ScheduleActivityTask',
                                 'activityId', act, 'activityType', 'do') || extra $$;

-- Everything a call could write, to show that a failed call wrote nothing.
CREATE FUNCTION t.footprint() RETURNS text LANGUAGE sql AS $$
    SELECT format('runs=%s history=%s ready=%s timers=%s buffered=%s activities=%s attempts=%s user_timers=%s',
        (SELECT count(*) FROM durable.runs), (SELECT count(*) FROM durable.history),
        (SELECT count(*) FROM durable.ready_tasks), (SELECT count(*) FROM durable.timers),
        (SELECT count(*) FROM durable.buffered_events), (SELECT count(*) FROM durable.activities),
        (SELECT count(*) FROM durable.activity_attempt_log), (SELECT count(*) FROM durable.user_timers)) $$;

-- Poll an activity task of queue q (it must be there) and fail it at the
-- current test time; then report describe_workflow's pending activity as
-- "attempt/state/delay" (delay: nextAttemptScheduledTime - now), move the
-- clock to the next attempt and tick.  'closed' when the activity is over.
CREATE FUNCTION t.fail_round(wid text, reason text DEFAULT 'boom',
                                   next_delay interval DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t jsonb;
    p jsonb;
    r text;
BEGIN
    t := durable.poll_activity_task(wid);
    IF t IS NULL THEN RAISE EXCEPTION 'no activity task for %', wid; END IF;
    PERFORM durable.fail_activity(t->>'taskToken', reason, NULL, next_delay);
    p := durable.describe_workflow(wid)->'pendingActivities'->0;
    IF p IS NULL THEN RETURN 'closed'; END IF;
    IF p->>'nextAttemptScheduledTime' IS NULL THEN
        RETURN format('%s/%s/queued', p->>'attempt', p->>'state');
    END IF;
    r := format('%s/%s/%s', p->>'attempt', p->>'state',
                (p->>'nextAttemptScheduledTime')::timestamptz - durable.now());
    PERFORM t.at(p->>'nextAttemptScheduledTime');
    PERFORM durable.tick();
    RETURN r;
END $$;
