/** JSON values, durations and retry policies: what durable's SQL API takes. */
import { InvalidArgumentError } from './errors';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Thrown when a value cannot be carried as JSON (a BigInt, a function, NaN, a cycle). */
export class NotJsonError extends TypeError {
  constructor(what: string, reason: string) {
    super(`${what} is not JSON: ${reason}`);
    this.name = 'NotJsonError';
  }
}

/**
 * The JSON text of value, refusing what JSON.stringify would silently change
 * or drop into something else: BigInt, symbols, functions, NaN and the
 * infinities, cycles.  undefined at the top is null (a workflow that returns
 * nothing completes with null); undefined object fields are left out, as
 * JSON.stringify does.
 */
export function toJsonText(value: unknown, what: string): string {
  try {
    check(value, '', new Set<object>());
  } catch (e) {
    if (e instanceof PathError) throw new NotJsonError(what, e.path === '' ? e.message : `at ${e.path}: ${e.message}`);
    throw e;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

/**
 * A JSON argument of a SQL call (null for undefined); a value JSON cannot
 * hold is an InvalidArgumentError (22023) naming `what`, before any call.
 */
export function jsonParam(value: unknown, what: string): string | null {
  if (value === undefined) return null;
  try {
    return toJsonText(value, what);
  } catch (e) {
    if (e instanceof NotJsonError) throw new InvalidArgumentError(e.message, { sqlstate: '22023' }, what);
    throw e;
  }
}

class PathError extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

function check(v: unknown, path: string, seen: Set<object>): void {
  switch (typeof v) {
    case 'undefined':
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(v)) throw new PathError(path, `${v} is not a JSON number`);
      return;
    case 'bigint':
      throw new PathError(path, `BigInt ${v}n has no JSON form (give it as a string)`);
    case 'symbol':
      throw new PathError(path, 'a symbol has no JSON form');
    case 'function':
      throw new PathError(path, 'a function has no JSON form');
    case 'object': {
      if (v === null) return;
      if (seen.has(v)) throw new PathError(path, 'it contains a cycle');
      const withToJson = v as { toJSON?: unknown };
      if (typeof withToJson.toJSON === 'function') return;
      seen.add(v);
      if (Array.isArray(v)) {
        v.forEach((x, i) => {
          if (x === undefined) throw new PathError(`${path}[${i}]`, 'undefined in an array');
          check(x, `${path}[${i}]`, seen);
        });
      } else {
        if (v instanceof Map || v instanceof Set) {
          throw new PathError(path, `a ${v.constructor.name} has no JSON form (give an object or an array)`);
        }
        for (const [k, x] of Object.entries(v)) check(x, `${path}.${k}`, seen);
      }
      seen.delete(v);
      return;
    }
  }
}

/** A duration: milliseconds, or text such as '30s', '5 minutes', '1h', '2 days', '1.5 seconds'. */
export type Duration = number | string;

const unitSeconds: Record<string, number> = {
  ms: 0.001, millisecond: 0.001, milliseconds: 0.001,
  s: 1, sec: 1, secs: 1, second: 1, seconds: 1,
  m: 60, min: 60, mins: 60, minute: 60, minutes: 60,
  h: 3600, hr: 3600, hour: 3600, hours: 3600,
  d: 86400, day: 86400, days: 86400,
  w: 604800, week: 604800, weeks: 604800,
};

/** A duration in seconds (what durable's JSON takes); a bad one is a TypeError naming `what`. */
export function toSeconds(d: Duration, what: string): number {
  if (typeof d === 'number') {
    if (!Number.isFinite(d) || d < 0) throw new TypeError(`${what} must be a non-negative number of milliseconds`);
    return d / 1000;
  }
  let total = 0;
  let rest = d.trim();
  if (rest === '') throw new TypeError(`${what} is an empty duration`);
  while (rest !== '') {
    const m = /^(\d+(?:\.\d+)?)\s*([a-z]+)\s*/i.exec(rest);
    const unit = m ? unitSeconds[m[2].toLowerCase()] : undefined;
    if (!m || unit === undefined) {
      throw new TypeError(`${what}: cannot read duration '${d}' (e.g. 500, '30s', '5 minutes', '1h 30m')`);
    }
    total += Number(m[1]) * unit;
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** A duration as a PostgreSQL interval literal. */
export function toInterval(d: Duration, what: string): string {
  return `${toSeconds(d, what)} seconds`;
}

/** A retry policy (docs/api.md "Retry policies"), with durations instead of seconds. */
export interface RetryPolicy {
  initialInterval?: Duration;
  backoffCoefficient?: number;
  maximumInterval?: Duration;
  /** The policy's expiration, counted from the first attempt; 0 or unset: none. */
  expirationInterval?: Duration;
  /** 1: no retry; counts the first attempt. */
  maximumAttempts?: number;
  /** Failure reasons (error names, ApplicationFailure types) not retried. */
  nonRetryableErrorReasons?: string[];
}

/** The policy in durable's (Cadence's) JSON form. */
export function retryPolicyJson(p: RetryPolicy, what: string): JsonObject {
  const o: JsonObject = {};
  if (p.initialInterval !== undefined) o.initialIntervalInSeconds = toSeconds(p.initialInterval, `${what}.initialInterval`);
  if (p.backoffCoefficient !== undefined) o.backoffCoefficient = p.backoffCoefficient;
  if (p.maximumInterval !== undefined) o.maximumIntervalInSeconds = toSeconds(p.maximumInterval, `${what}.maximumInterval`);
  if (p.expirationInterval !== undefined) o.expirationIntervalInSeconds = toSeconds(p.expirationInterval, `${what}.expirationInterval`);
  if (p.maximumAttempts !== undefined) o.maximumAttempts = p.maximumAttempts;
  if (p.nonRetryableErrorReasons !== undefined) o.nonRetriableErrorReasons = [...p.nonRetryableErrorReasons];
  return o;
}
