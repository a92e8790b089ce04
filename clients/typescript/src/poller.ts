/**
 * A long poll on a connection of its own: reconnects with backoff when the
 * connection is lost, and is woken for a shutdown by cancelling its statement
 * (pg_cancel_backend), which rolls the poll's claim back, so that no task is
 * claimed by a worker that is going away.
 */
import { Connection, PoolClientLike, queryOn } from './connection';
import { Backoff, Logger, sleep } from './backoff';

export class Poller {
  private client: PoolClientLike | null = null;
  private pid: number | null = null;
  private polling = false;
  private inflight: Promise<unknown> | null = null;
  private readonly backoff = new Backoff();
  private readonly stopController = new AbortController();

  constructor(private readonly conn: Connection, private readonly logger: Logger, private readonly what: string) {}

  get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  /**
   * Runs the poll statement; its rows, or null when stopped.  Errors of the
   * connection (or of the database) are logged, and the poll is tried again
   * after a backoff on a new connection.
   */
  async poll(text: string, values: unknown[]): Promise<Array<Record<string, unknown>> | null> {
    while (!this.stopped) {
      try {
        if (this.client === null) {
          const c = await this.conn.pool.connect();
          // A connection that breaks while no statement runs on it (the
          // server terminated it between two polls) emits 'error' on its
          // client, which without a listener ends the process.  The next
          // statement then fails on it, and the poll reconnects.
          c.on?.('error', (err) => this.logger.warn(`${this.what}: connection lost`, err));
          try {
            this.pid = Number((await queryOn(this.conn, c, 'SELECT pg_backend_pid() AS pid'))[0].pid);
          } catch (e) {
            c.release(true);
            throw e;
          }
          this.client = c;
        }
        if (this.stopped) {
          // stop() ran while the connection was being made: give it back.
          this.dropClient(false);
          return null;
        }
        this.polling = true;
        const p = queryOn(this.conn, this.client, text, values);
        this.inflight = p.catch(() => undefined);
        const rows = await p;
        this.polling = false;
        this.inflight = null;
        this.backoff.reset();
        return rows;
      } catch (e) {
        this.polling = false;
        this.inflight = null;
        if (this.stopped) return null;
        this.logger.warn(`${this.what}: poll failed, reconnecting`, e);
        this.dropClient();
        await sleep(this.backoff.next(), this.stopController.signal);
      }
    }
    return null;
  }

  private dropClient(broken = true): void {
    if (this.client !== null) {
      try {
        this.client.release(broken);
      } catch {
        // already gone
      }
      this.client = null;
      this.pid = null;
    }
  }

  /**
   * Stops: a poll under way is cancelled (its claim rolls back) and waited
   * for; a poll that returned a task meanwhile still gives it to its caller.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopController.abort();
    if (this.polling && this.pid !== null) {
      try {
        await this.conn.query('SELECT pg_cancel_backend($1)', [this.pid]);
      } catch (e) {
        this.logger.warn(`${this.what}: could not cancel the poll`, e);
      }
    }
    if (this.inflight !== null) await this.inflight;
    this.dropClient(false);
  }
}
