import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../runtime/bus/logger.ts';
import { WorkQueue, type WorkItem } from '../../runtime/cluster/work-queue.ts';
import { eventually } from '../support/runtime.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';

let cluster: NatsCluster;
const conns: NatsConnection[] = [];
beforeAll(async () => {
  cluster = await startNatsCluster();
}, 60_000);
afterAll(async () => {
  for (const nc of conns) await nc.close().catch(() => {});
  await cluster?.stop();
});

async function queue(i: number): Promise<{ nc: NatsConnection; q: WorkQueue }> {
  const nc = await connect({ servers: [cluster.urls[i % 3] as string], token: cluster.token() });
  conns.push(nc);
  return { nc, q: await WorkQueue.open(nc, { replicas: 3, ackWaitMs: 1000 }, silentLogger) };
}

const item = (runId: string): WorkItem => ({ v: 1, runId, why: 'decision', at: Date.now() });

describe('the resume work queue', () => {
  it('in-progress acks keep an item with its node while the run executes longer than ack_wait', async () => {
    const a = await queue(0);
    const b = await queue(1);
    const seenA: number[] = [];
    const seenB: string[] = [];
    let doneA = false;
    await a.q.consume(async (it, deliveries) => {
      if (it.runId !== 'long') return { ack: true };
      seenA.push(deliveries);
      await new Promise((r) => setTimeout(r, 3500)); // > 3 × ack_wait, with working() every ~333 ms
      doneA = true;
      return { ack: true };
    });
    await a.q.publish(item('long'), 'long-1');
    await eventually(() => seenA.length > 0, 10_000, 'A to take the item');
    await b.q.consume(async (it) => {
      seenB.push(it.runId);
      return { ack: true };
    });
    await eventually(() => doneA, 15_000, 'A to finish');
    expect(seenA).toEqual([1]);
    expect(seenB).not.toContain('long');
    await a.q.stop();
    await b.q.stop();
  }, 60_000);

  it('an item held by a node that dies is redelivered to another node after ack_wait', async () => {
    const a = await queue(0);
    const b = await queue(2);
    let heldByA = false;
    await a.q.consume(async (it) => {
      if (it.runId === 'orphan') heldByA = true;
      return new Promise(() => {}); // never settles: the node dies holding it
    });
    await a.q.publish(item('orphan'), 'orphan-1');
    await eventually(() => heldByA, 10_000, 'A to take the item');
    await a.nc.close(); // A is gone: no more in-progress acks, no ack
    const atB: number[] = [];
    await b.q.consume(async (it, deliveries) => {
      if (it.runId === 'orphan') atB.push(deliveries);
      return { ack: true };
    });
    await eventually(() => atB.length > 0, 20_000, 'B to get the item');
    expect(atB[0]).toBeGreaterThanOrEqual(2);
    await b.q.stop();
  }, 60_000);

  it('the same item published by several nodes is one item (message-id deduplication)', async () => {
    const a = await queue(1);
    const b = await queue(2);
    await Promise.all([a.q.publish(item('dup'), 'dup-1'), b.q.publish(item('dup'), 'dup-1')]);
    const got: string[] = [];
    await a.q.consume(async (it) => {
      got.push(it.runId);
      return { ack: true };
    });
    await a.q.publish(item('marker'), 'marker-1');
    await eventually(() => got.includes('marker'), 10_000, 'the marker behind it');
    expect(got.filter((r) => r === 'dup')).toHaveLength(1);
    await a.q.stop();
  }, 60_000);
});
