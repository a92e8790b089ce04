/**
 * An order workflow: charge the card, reserve the item, ship it.  When a step
 * fails for good, the steps already done are undone in reverse order (a
 * saga): the reservation released, the charge refunded.
 *
 * The activities talk to a payment gateway, a warehouse and a carrier; here an
 * in-memory `Shop` stands for them, so that the example runs with nothing but
 * PostgreSQL.  In an application they would make the HTTP calls or queries.
 */
import { ActivityFailure, ActivityFunction, ApplicationFailure, WorkflowContext, ActivityOptions } from 'durable-pg';

export interface OrderInput {
  orderId: string;
  item: string;
  amount: number;
  address: string;
}

export type OrderResult =
  | { status: 'shipped'; chargeId: string; reservationId: string; tracking: string }
  | { status: 'compensated'; failedStep: string; reason: string; undone: string[] };

/** Every step: 30 s per attempt, 3 attempts 1 s apart (doubling). */
const step: ActivityOptions = {
  startToCloseTimeout: '30s',
  retryPolicy: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 3 },
};

/** The workflow: deterministic, it only calls activities through ctx. */
export async function order(ctx: WorkflowContext, input: OrderInput): Promise<OrderResult> {
  // What to undo if a later step fails, newest first.
  const undo: Array<{ name: string; run: () => Promise<unknown> }> = [];
  try {
    const { chargeId } = await ctx.activity<{ chargeId: string }>('charge',
      { orderId: input.orderId, amount: input.amount }, step);
    undo.unshift({ name: 'refund', run: () => ctx.activity('refund', { chargeId, amount: input.amount }, step) });

    const { reservationId } = await ctx.activity<{ reservationId: string }>('reserve',
      { orderId: input.orderId, item: input.item }, step);
    undo.unshift({ name: 'release', run: () => ctx.activity('release', { reservationId }, step) });

    const { tracking } = await ctx.activity<{ tracking: string }>('ship',
      { orderId: input.orderId, reservationId, address: input.address }, step);
    return { status: 'shipped', chargeId, reservationId, tracking };
  } catch (e) {
    if (!(e instanceof ActivityFailure)) throw e;
    // A step failed after its retries: undo what was done, newest first.
    for (const u of undo) await u.run();
    return { status: 'compensated', failedStep: e.activityType, reason: e.reason, undone: undo.map((u) => u.name) };
  }
}

/** The payment gateway, warehouse and carrier of the example, in memory. */
export class Shop {
  readonly log: string[] = [];
  private n = 0;
  stock: Record<string, number> = { book: 3, lamp: 1 };
  /** Addresses no carrier delivers to: shipping there fails for good. */
  undeliverable = new Set(['the moon']);

  activities(): Record<string, ActivityFunction> {
    return {
      charge: (input: { orderId: string; amount: number }) => {
        if (input.amount <= 0) throw ApplicationFailure.nonRetryable(`bad amount ${input.amount}`, 'BadAmount');
        const chargeId = `ch_${input.orderId}_${++this.n}`;
        this.log.push(`charge ${input.amount} (${chargeId})`);
        return { chargeId };
      },
      refund: (input: { chargeId: string; amount: number }) => {
        this.log.push(`refund ${input.amount} (${input.chargeId})`);
        return { refunded: input.chargeId };
      },
      reserve: (input: { orderId: string; item: string }) => {
        if ((this.stock[input.item] ?? 0) <= 0) {
          throw ApplicationFailure.nonRetryable(`${input.item} is out of stock`, 'OutOfStock');
        }
        this.stock[input.item]--;
        const reservationId = `res_${input.orderId}_${input.item}`;
        this.log.push(`reserve ${input.item} (${reservationId})`);
        return { reservationId };
      },
      release: (input: { reservationId: string }) => {
        const item = input.reservationId.split('_').pop() as string;
        this.stock[item] = (this.stock[item] ?? 0) + 1;
        this.log.push(`release ${input.reservationId}`);
        return { released: input.reservationId };
      },
      ship: (input: { orderId: string; address: string }) => {
        if (this.undeliverable.has(input.address)) {
          throw ApplicationFailure.nonRetryable(`no carrier delivers to ${input.address}`, 'Undeliverable');
        }
        const tracking = `1Z${input.orderId.replace(/\W/g, '').toUpperCase()}`;
        this.log.push(`ship to ${input.address} (${tracking})`);
        return { tracking };
      },
    };
  }
}
