/**
 * How durable-pg reaches the database: a pool of the `pg` driver, made from
 * connection settings or given by the application.  The public types are
 * structural so that a `pg.Pool` fits without durable-pg's types naming pg's.
 */
import { createHash } from 'node:crypto';
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
  /**
   * Whether durable-pg's statements are named prepared statements, parsed
   * once a connection (default: true with a pool durable-pg makes or a
   * `pg.Pool`; false with another PoolLike, which gets statements as text).
   * Turn it off behind a pooler that does not keep them (PgBouncer in
   * transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

/** A statement as the pg driver takes it: named (prepared once a connection) or not. */
interface QueryConfig {
  name?: string;
  text: string;
  values?: unknown[];
}

/** Objects whose query() takes a QueryConfig, as pg's Pool and Client do. */
interface ConfigQueryable {
  query(config: QueryConfig): Promise<QueryResultLike>;
}

const statementNames = new Map<string, string>();

/**
 * The prepared statement of a text: its name is a hash of the text, so that
 * the same text has the same name on every connection and two texts never
 * share one.
 */
function prepared(text: string, values?: unknown[]): QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `durable_pg_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return { name, text, values: values ?? [] };
}

/** Whether a pool given by the application is pg's (whose query() takes a QueryConfig). */
function isPgPool(pool: PoolLike): boolean {
  return typeof (pool as { Client?: unknown }).Client === 'function';
}

/** A pool and whether durable-pg owns it. */
export class Connection {
  readonly pool: PoolLike;
  /** Whether statements are named prepared statements (ConnectionOptions.preparedStatements). */
  readonly prepared: boolean;
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
    this.prepared = options.preparedStatements ?? (this.owned || isPgPool(this.pool));
  }

  /** Runs a statement; database errors come back as DurableError subclasses. */
  async query(text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>> {
    try {
      if (this.prepared) return (await (this.pool as unknown as ConfigQueryable).query(prepared(text, values))).rows;
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

/**
 * Runs a statement on one connection (of conn's pool), mapping database
 * errors; a prepared statement when conn's are.
 */
export async function queryOn(conn: Connection, c: PoolClientLike, text: string,
  values?: unknown[]): Promise<Array<Record<string, unknown>>> {
  try {
    if (conn.prepared) return (await (c as unknown as ConfigQueryable).query(prepared(text, values))).rows;
    return (await c.query(text, values)).rows;
  } catch (e) {
    throw fromDatabaseError(e);
  }
}
