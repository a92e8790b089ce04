/** Small helpers shared by the workers. */
import { hostname } from 'node:os';

/** Something that logs what a worker could not do. */
export interface Logger {
  warn(message: string, error?: unknown): void;
}

export const consoleLogger: Logger = {
  warn(message: string, error?: unknown): void {
    console.error(`durable-pg: ${message}`, error instanceof Error ? error.message : (error ?? ''));
  },
};

/** Exponential backoff with jitter for reconnecting: 100 ms doubling to 10 s. */
export class Backoff {
  private failures = 0;

  constructor(private readonly initialMs = 100, private readonly maxMs = 10000) {}

  reset(): void {
    this.failures = 0;
  }

  /** The delay before the next try; each call counts a failure. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.failures);
    this.failures = Math.min(this.failures + 1, 30);
    return base / 2 + Math.random() * (base / 2);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The name the database takes for a worker: host and pid. */
export function defaultIdentity(): string {
  return `${process.pid}@${hostname()}`;
}
