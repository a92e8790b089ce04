/**
 * The order workflow of examples/typescript-order (charge, reserve, ship;
 * release and refund when a step fails), as its file is written: the file is
 * type-checked against this package's source, compiled, and its workflow and
 * activities run by a Worker: an order that ships, one whose shipping fails
 * for good (compensated newest first), one whose charge fails (nothing to undo).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as fs from 'node:fs';
import ts from 'typescript';
import * as sdk from '../src/index';
import { Client, Worker, WorkflowFunction, ActivityFunction } from '../src/index';
import { MemoryLogger, asPool, makePool } from './helpers';

const pkgDir = path.resolve(__dirname, '../..');          // clients/typescript (from build/test)
const exampleFile = path.resolve(pkgDir, '../../examples/typescript-order/src/order.ts');

interface ShopLike {
  log: string[];
  stock: Record<string, number>;
  activities(): Record<string, ActivityFunction>;
}
interface ExampleModule {
  order: WorkflowFunction;
  Shop: new () => ShopLike;
}

/** Type-checks the example's file with 'durable-pg' resolved to this package's source. */
function typeCheck(): string[] {
  const program = ts.createProgram([exampleFile], {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, strict: true, noEmit: true, skipLibCheck: true,
    esModuleInterop: true, types: [], typeRoots: [path.join(pkgDir, 'node_modules/@types')],
    baseUrl: pkgDir, paths: { 'durable-pg': ['src/index.ts'] },
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

/** Compiles the example's file and evaluates it with require('durable-pg') = this package. */
function load(): ExampleModule {
  const js = ts.transpileModule(fs.readFileSync(exampleFile, 'utf8'), {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true },
  }).outputText;
  const mod = { exports: {} as Record<string, unknown> };
  const req = (name: string): unknown => {
    if (name === 'durable-pg') return sdk;
    throw new Error(`the example requires ${name}`);
  };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('exports', 'require', 'module', js)(mod.exports, req, mod);
  return mod.exports as unknown as ExampleModule;
}

const pool = makePool();
const client = new Client({ pool: asPool(pool), taskQueue: 'orders' });
let example: ExampleModule;
let shop: ShopLike;
let worker: Worker;

before(() => {
  example = load();
  shop = new example.Shop();
  worker = new Worker({
    pool: asPool(pool), taskQueue: 'orders', pollWait: 1000, workflows: { order: example.order },
    activities: shop.activities(), logger: new MemoryLogger(),
  });
  void worker.run();
});
after(async () => {
  await worker.shutdown();
  await pool.end();
});

async function activities(workflowId: string): Promise<string[]> {
  return (await client.getHandle(workflowId).history())
    .filter((e) => e.eventType === 'ActivityTaskScheduled').map((e) => String(e.attributes.activityType));
}

test('the example type-checks against this package', () => {
  assert.deepEqual(typeCheck(), []);
});

test('an order that ships: charge, reserve, ship', async () => {
  const h = await client.start('order', { orderId: 'o1', item: 'book', amount: 12.5, address: '1 Main St' },
    { workflowId: 'o1' });
  assert.deepEqual(await h.result({ timeout: 15000 }),
    { status: 'shipped', chargeId: 'ch_o1_1', reservationId: 'res_o1_book', tracking: '1ZO1' });
  assert.deepEqual(await activities('o1'), ['charge', 'reserve', 'ship']);
  assert.deepEqual(shop.log, ['charge 12.5 (ch_o1_1)', 'reserve book (res_o1_book)', 'ship to 1 Main St (1ZO1)']);
  assert.equal(shop.stock.book, 2);
});

test('shipping fails for good: the reservation is released, then the charge refunded', async () => {
  shop.log.length = 0;
  const h = await client.start('order', { orderId: 'o2', item: 'lamp', amount: 40, address: 'the moon' },
    { workflowId: 'o2' });
  assert.deepEqual(await h.result({ timeout: 15000 }),
    { status: 'compensated', failedStep: 'ship', reason: 'Undeliverable', undone: ['release', 'refund'] });
  assert.deepEqual(await activities('o2'), ['charge', 'reserve', 'ship', 'release', 'refund']);
  assert.deepEqual(shop.log, ['charge 40 (ch_o2_2)', 'reserve lamp (res_o2_lamp)', 'release res_o2_lamp',
    'refund 40 (ch_o2_2)']);
  assert.equal(shop.stock.lamp, 1, 'the lamp is back in stock');
  // Not retried: the failure was for good (one attempt of ship).
  const failed = (await h.history()).filter((e) => e.eventType === 'ActivityTaskFailed');
  assert.equal(failed.length, 1);
});

test('the charge fails: nothing to undo', async () => {
  shop.log.length = 0;
  const h = await client.start('order', { orderId: 'o3', item: 'book', amount: 0, address: 'here' },
    { workflowId: 'o3' });
  assert.deepEqual(await h.result({ timeout: 15000 }),
    { status: 'compensated', failedStep: 'charge', reason: 'BadAmount', undone: [] });
  assert.deepEqual(await activities('o3'), ['charge']);
  assert.deepEqual(shop.log, []);
});
