/**
 * Shared by the tests: the database comes from the PG* variables that
 * scripts/test.sh sets (a fresh database with durable, per test file, as the
 * cluster's superuser, so that durable.test_time may be set).
 */
import { Pool } from 'pg';
import type { PoolLike, WorkflowHandle, HistoryEvent, JsonValue } from '../src/index';

export function makePool(max = 20): Pool {
  const pool = new Pool({ max });
  pool.on('error', () => undefined);
  return pool;
}

export function asPool(p: Pool): PoolLike {
  return p;
}

/** A logger that keeps the warnings (the tests look at some). */
export class MemoryLogger {
  readonly lines: string[] = [];

  warn(message: string, error?: unknown): void {
    this.lines.push(`${message}: ${error instanceof Error ? error.message : String(error ?? '')}`);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls cond every 20 ms until it is truthy (at most `ms`). */
export async function until<T>(what: string, cond: () => Promise<T> | T, ms = 15000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Fires the timers due `seconds` from now (the wall clock): durable.test_time
 * set in this session only, then durable.tick().  Call it when no decision
 * task is under way, or its timeout fires too.
 */
export async function tickAhead(pool: Pool, seconds: number): Promise<number> {
  const c = await pool.connect();
  try {
    await c.query("SELECT set_config('durable.test_time', (clock_timestamp() + $1::interval)::text, false)",
      [`${seconds} seconds`]);
    const r = await c.query('SELECT durable.tick() AS n');
    return Number(r.rows[0].n);
  } finally {
    await c.query("RESET durable.test_time").catch(() => undefined);
    c.release();
  }
}

export async function events<R = JsonValue>(h: WorkflowHandle<R>): Promise<HistoryEvent[]> {
  return h.history();
}

export async function eventTypes<R = JsonValue>(h: WorkflowHandle<R>): Promise<string[]> {
  return (await h.history()).map((e) => e.eventType);
}

/** Waits until the run's history has an event of that type (count times). */
export async function waitEvent<R = JsonValue>(h: WorkflowHandle<R>, type: string, count = 1, ms = 15000): Promise<HistoryEvent> {
  return until(`${count} ${type} of ${h.workflowId}`, async () => {
    const evs = (await h.history()).filter((e) => e.eventType === type);
    return evs.length >= count ? evs[count - 1] : undefined;
  }, ms);
}

/** Runs fn as a role made for the test (LOGIN, with the given group roles), then drops it. */
export async function withRole<T>(admin: Pool, name: string, groups: string[], fn: (p: Pool) => Promise<T>): Promise<T> {
  await admin.query(`DROP ROLE IF EXISTS ${name}`);
  await admin.query(`CREATE ROLE ${name} LOGIN${groups.length ? ` IN ROLE ${groups.join(', ')}` : ''}`);
  const p = new Pool({ user: name, max: 2 });
  p.on('error', () => undefined);
  try {
    return await fn(p);
  } finally {
    await p.end();
    await admin.query(`DROP ROLE IF EXISTS ${name}`).catch(() => undefined);
  }
}
