/**
 * How durable-pg reaches the database: a pool of the `pg` driver, made from
 * connection settings or given by the application.  The public types are
 * structural so that a `pg.Pool` fits without durable-pg's types naming pg's.
 */
import { Pool } from 'pg';
import { fromDatabaseError } from './errors';

/** Rows as the driver returns them. */
export interface QueryResultLike {
  rows: Array<Record<string, unknown>>;
}

/** One connection of a pool (`pg.PoolClient` fits). */
export interface PoolClientLike {
  query(text: string, values?: unknown[]): Promise<QueryResultLike>;
  release(err?: Error | boolean): void;
  /** `pg.PoolClient` emits 'error' when its connection breaks between two statements. */
  on?(event: 'error', listener: (err: Error) => void): unknown;
}

/** A pool of connections (`pg.Pool` fits). */
export interface PoolLike {
  query(text: string, values?: unknown[]): Promise<QueryResultLike>;
  connect(): Promise<PoolClientLike>;
  end(): Promise<void>;
}

/** Settings of a pool that durable-pg makes itself (those of `pg.PoolConfig`). */
export interface ConnectionConfig {
  connectionString?: string;
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  /** Most connections of the pool (10). */
  max?: number;
  application_name?: string;
  ssl?: boolean | Record<string, unknown>;
}

/**
 * Either `pool`, a pool the application owns (durable-pg never ends it), or
 * `connection`, settings (or a connection string) of a pool durable-pg makes
 * and ends in `close()`.  With neither, the PG* environment variables apply.
 */
export interface ConnectionOptions {
  pool?: PoolLike;
  connection?: ConnectionConfig | string;
}

/** A pool and whether durable-pg owns it. */
export class Connection {
  readonly pool: PoolLike;
  private readonly owned: boolean;
  private ended = false;

  constructor(options: ConnectionOptions, defaultMax = 10) {
    if (options.pool !== undefined) {
      if (options.connection !== undefined) {
        throw new TypeError('give either pool or connection, not both');
      }
      this.pool = options.pool;
      this.owned = false;
    } else {
      const cfg: ConnectionConfig = typeof options.connection === 'string'
        ? { connectionString: options.connection } : { ...(options.connection ?? {}) };
      cfg.max ??= defaultMax;
      cfg.application_name ??= 'durable-pg';
      const pool = new Pool(cfg);
      // An idle connection that breaks is dropped by the pool; without a
      // listener its error event would end the process.
      pool.on('error', () => undefined);
      this.pool = pool as unknown as PoolLike;
      this.owned = true;
    }
  }

  /** Runs a statement; database errors come back as DurableError subclasses. */
  async query(text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>> {
    try {
      return (await this.pool.query(text, values)).rows;
    } catch (e) {
      throw fromDatabaseError(e);
    }
  }

  async close(): Promise<void> {
    if (this.owned && !this.ended) {
      this.ended = true;
      await this.pool.end();
    }
  }
}

/** Runs a statement on one connection, mapping database errors. */
export async function queryOn(c: PoolClientLike, text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>> {
  try {
    return (await c.query(text, values)).rows;
  } catch (e) {
    throw fromDatabaseError(e);
  }
}
