/**
 * Runs the order workflow of order.ts twice: an order that ships, and one
 * whose shipping fails for good, so that its charge is refunded and its
 * reservation released.  One worker (workflows and activities of the task
 * queue `orders`) and one client in this process; the database comes from the
 * PG* environment variables (PGHOST, PGPORT, PGDATABASE, PGUSER ...).
 *
 *     npm install && npm run build && PGDATABASE=demo npm start
 */
import { Client, Worker } from 'durable-pg';
import { OrderInput, OrderResult, Shop, order } from './order';

async function main(): Promise<void> {
  const shop = new Shop();
  const queue = process.env.ORDER_TASK_QUEUE ?? 'orders';
  const worker = new Worker({ taskQueue: queue, workflows: { order }, activities: shop.activities() });
  const running = worker.run();
  const client = new Client({ taskQueue: queue });
  try {
    const orders: OrderInput[] = [
      { orderId: 'order-1', item: 'book', amount: 12.5, address: '1 Main St' },
      { orderId: 'order-2', item: 'lamp', amount: 40, address: 'the moon' },
    ];
    for (const input of orders) {
      // allow_duplicate: the example can run again on the same database.
      const h = await client.start<OrderResult>('order', input,
        { workflowId: input.orderId, idReusePolicy: 'allow_duplicate' });
      const result = await h.result({ timeout: 60000 });
      const steps = (await h.history())
        .filter((e) => e.eventType === 'ActivityTaskScheduled')
        .map((e) => String(e.attributes.activityType));
      console.log(`${input.orderId}: ${JSON.stringify(result)}`);
      console.log(`  activities in its history: ${steps.join(', ')}`);
    }
    console.log(`the shop saw: ${shop.log.join('; ')}`);
    console.log(`stock left: ${JSON.stringify(shop.stock)}`);
  } finally {
    await client.close();
    await worker.shutdown();
    await running;
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
