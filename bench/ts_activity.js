// bench/ts_activity.js: the ts_activity workload of bench/run.sh (bench/README.md).
//
//   node bench/ts_activity.js DURATION SDK_DIST [CLIENTS [STEPS]]
//
// SDK_DIST is the compiled durable-pg package (clients/typescript/dist); the
// database comes from the PG* variables, and DURABLE_BENCH_POSTMASTER, when
// set, is the pid of its postmaster (for the server's CPU).  One Node process
// runs 8 Workers (a workflow worker and an activity worker each) on task
// queue ts_bench, and:
//
// 1. throughput: 8 clients each start a workflow of one activity and wait for
//    its result (handle.result()), again and again, for DURATION seconds: the
//    shape of the activity cycle (bench/activity_cycle.sql) with 8 pgbench
//    clients; then the same with each further number of clients that CLIENTS
//    lists ("8 32": 8, then 32).  Prints "throughput WORKFLOWS_PER_S ERRORS
//    NODE_CPU_PCT CLIENTS SERVER_MS NODE_MS WRITES": the workflows of type ts_one that
//    completed in those seconds (counted in durable.runs) / DURATION, the
//    errors, the CPU the Node process used (% of one core), the clients, and
//    the CPU a workflow of the server's processes (0 without
//    DURABLE_BENCH_POSTMASTER) and of the Node process, in ms, and the write
//    transactions a workflow (transaction ids assigned over the run).
// 2. steps (unless STEPS is 0): workflows of 3 and of 100 sequential activities, 8 at a time, about
//    2,400 steps each; prints "steps N MS_PER_STEP WORKFLOWS DECISION_TASKS
//    CACHE_HITS" for each: wall time / steps completed, and how many of the
//    decision tasks were answered from the workers' cache (the others replayed
//    the history from the start: a run's first task, or a task that another of
//    the 8 workers than the one that has the run cached took).
'use strict';

const fs = require('fs');
const path = require('path');

const duration = Number(process.argv[2] || 20);
const dist = path.resolve(process.argv[3]);
const sdk = require(dist);
// pg as the SDK has it (clients/typescript/node_modules).
const { Pool } = require(require.resolve('pg', { paths: [dist] }));
// The numbers of clients of the throughput runs, one run each (8: as the activity cycle).
const inflight = (process.argv[4] || '8').split(/[ ,]+/).filter(Boolean).map(Number);
const runSteps = process.argv[5] !== '0';
const postmaster = Number(process.env.DURABLE_BENCH_POSTMASTER || 0);
const QUEUE = 'ts_bench';

// The CPU the server's processes used so far, in ms: the postmaster's own and its
// ended children's, and that of its children now running (/proc/PID/stat).
const ticksPerSecond = 100;
function serverCpuMs() {
  if (!postmaster) return 0;
  const fields = (pid) => {
    try {
      const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return text.slice(text.lastIndexOf(')') + 2).split(' ');
    } catch {
      return null;
    }
  };
  // After the command: state is field 3, so field N is at index N - 3.
  const ticks = (f, withChildren) => Number(f[11]) + Number(f[12]) + (withChildren ? Number(f[13]) + Number(f[14]) : 0);
  let sum = 0;
  const own = fields(postmaster);
  if (own) sum += ticks(own, true);
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const f = fields(pid);
    if (f && Number(f[1]) === postmaster) sum += ticks(f, false);
  }
  return sum * 1000 / ticksPerSecond;
}
const WORKERS = 8;

async function one(ctx, input) {
  return ctx.activity('noop', input, { startToCloseTimeout: '60s' });
}
async function steps(ctx, n) {
  for (let i = 0; i < n; i++) await ctx.activity('noop', i, { startToCloseTimeout: '60s' });
  return n;
}

async function main() {
  // The workers' pool (a long poll each for workflow and activity tasks, and their
  // answers) and the clients' (a wait_workflow each): apart, so that clients waiting
  // for results never hold the connections the workers answer with.
  const pool = new Pool({ max: WORKERS * 4 + 8, application_name: 'durable-ts-bench' });
  pool.on('error', () => undefined);
  const clientPool = new Pool({ max: Math.max(...inflight, 8) + 4, application_name: 'durable-ts-bench' });
  clientPool.on('error', () => undefined);
  const logger = { warn: (m, e) => console.error(`warn: ${m}: ${e && e.message}`) };
  const workers = [];
  for (let i = 0; i < WORKERS; i++) {
    const w = new sdk.Worker({
      pool, taskQueue: QUEUE, identity: `ts-bench-${i}`, workflows: { ts_one: one, ts_steps: steps },
      activities: { noop: (x) => x }, maxConcurrentActivities: 2, logger,
    });
    workers.push({ w, done: w.run() });
  }
  const client = new sdk.Client({ pool: clientPool, taskQueue: QUEUE });
  // Transaction ids assigned so far (each transaction that wrote took one).
  const txid = async () => Number((await pool.query('SELECT txid_current() AS x')).rows[0].x);
  const completed = async (type) => Number((await pool.query(
    "SELECT count(*) AS n FROM durable.runs WHERE workflow_type = $1 AND status = 'completed'", [type])).rows[0].n);

  // 1. Throughput, with each number of clients.
  for (const clients of inflight) {
    const before = await completed('ts_one');
    const xid0 = await txid();
    const server0 = serverCpuMs();
    const cpu0 = process.cpuUsage();
    const end = Date.now() + duration * 1000;
    let errors = 0;
    await Promise.all(Array.from({ length: clients }, async () => {
      while (Date.now() < end) {
        try {
          const h = await client.start('ts_one', { n: 1 });
          await h.result({ timeout: 60000 });
        } catch (e) {
          if (++errors <= 5) console.error(`error: ${e && e.message}`);
        }
      }
    }));
    const cpu = process.cpuUsage(cpu0);
    const serverMs = serverCpuMs() - server0;
    const after = await completed('ts_one');
    const writes = (await txid()) - xid0 - 1;
    const n = Math.max(1, after - before);
    const cpuPct = (cpu.user + cpu.system) / 1e4 / duration;
    console.log(`throughput ${((after - before) / duration).toFixed(1)} ${errors} ${cpuPct.toFixed(0)} ${clients} `
      + `${(serverMs / n).toFixed(3)} ${((cpu.user + cpu.system) / 1e3 / n).toFixed(3)} ${(writes / n).toFixed(2)}`);
  }

  // 2. Cost per step: 3-step and 100-step workflows, 8 at a time.
  const stats = () => workers.reduce((a, { w }) => {
    const s = w.workflowWorker.stats;
    return { hits: a.hits + s.cacheHits, tasks: a.tasks + s.decisionTasks };
  }, { hits: 0, tasks: 0 });
  for (const n of runSteps ? [3, 100] : []) {
    const perClient = Math.max(1, Math.round(2400 / n / 8));
    const s0 = stats();
    const t0 = process.hrtime.bigint();
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let k = 0; k < perClient; k++) {
        const h = await client.start('ts_steps', n);
        await h.result({ timeout: 600000 });
      }
    }));
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const s1 = stats();
    const total = perClient * 8 * n;
    console.log(`steps ${n} ${(ms / total).toFixed(3)} ${perClient * 8} ${s1.tasks - s0.tasks} ${s1.hits - s0.hits}`);
  }

  await client.close();
  await Promise.all(workers.map(({ w }) => w.shutdown()));
  await Promise.all(workers.map(({ done }) => done));
  await pool.end();
  await clientPool.end();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
