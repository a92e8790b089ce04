-- One durable timer a transaction: a workflow whose first decision task is due in one
-- second (delay).  The timer worker fires it; bench/run.sh's timers() measures how late.
SELECT durable.start_workflow(:wtype, NULL, NULL, task_queue => 'timers', delay => '1 second');
