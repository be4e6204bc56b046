// Node leases on a real three-server JetStream cluster: a lease that lapsed because the node could
// not refresh it in time (the server leading the lease bucket died and its leader was re-elected,
// or the process paused longer than the TTL) is taken again by the same incarnation, so the node
// keeps working; only another process holding the node id makes it stop.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBuckets, type ClusterBuckets } from '../../runtime/cluster/buckets.ts';
import { createIfAbsent, kvKey, readVersioned } from '../../runtime/cluster/kv.ts';
import { LeaseRecord, NodeLease, nodeAlive } from '../../runtime/cluster/leases.ts';
import { leaderAwayFrom, startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { eventually } from '../support/runtime.ts';

const TTL = 1500;
let cluster: NatsCluster;
let nc: NatsConnection;
let buckets: ClusterBuckets;
const warnings: string[] = [];
const logger = {
  debug: () => {},
  info: () => {},
  warn: (_o: object, msg: string) => void warnings.push(msg),
  error: (_o: object, msg: string) => void warnings.push(msg),
};

beforeAll(async () => {
  cluster = await startNatsCluster();
  // One server named, as a runtime node's bus.url does (it learns the others from it).
  nc = await connect({ servers: [cluster.urls[0] as string], token: cluster.token(), timeout: 5000 });
  buckets = await openBuckets(nc, { replicas: 3, leaseTtlMs: TTL });
}, 60_000);
afterAll(async () => {
  await nc?.close().catch(() => {});
  await cluster?.stop();
});

function lease(id: string, onLost: () => void = () => {}): NodeLease {
  return new NodeLease(buckets.nodes, id, TTL, Date.now, logger, onLost);
}

const holder = async (id: string) =>
  (await readVersioned(buckets.nodes, id, LeaseRecord, 'lease'))?.value.incarnation ?? null;

describe('node leases', () => {
  it('the server leading the lease bucket killed: the lease lapses past its TTL and the node takes it again', async () => {
    let lost = 0;
    const l = lease('lease-quorum', () => lost++);
    await l.acquire();
    try {
      // The bucket's leader away from the client's own server (whose connection must stay up),
      // then that leader killed.
      const victim = await leaderAwayFrom(cluster, `KV_${buckets.nodes.name}`, 0);
      expect(victim).toBeGreaterThan(0);
      await cluster.kill(victim);
      try {
        await eventually(
          async () => (await holder('lease-quorum').catch(() => null)) === l.incarnation,
          30_000,
        );
        // Held for a while by refreshes on the quorum, never given up.
        const until = Date.now() + 3 * TTL;
        while (Date.now() < until) {
          expect(await holder('lease-quorum').catch(() => l.incarnation)).toBe(l.incarnation);
          await new Promise((r) => setTimeout(r, 200));
        }
        expect(l.lost).toBe(false);
        expect(lost).toBe(0);
      } finally {
        await cluster.restart(victim);
      }
    } finally {
      await l.release();
    }
  }, 120_000);

  it('a pause longer than the TTL: the entry aged out, the same incarnation takes it again', async () => {
    const l = lease('lease-pause');
    await l.acquire();
    try {
      const before = warnings.length;
      // The event loop blocked (no refresh runs) for twice the TTL: the bucket's max age removes the entry.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2 * TTL + 500);
      expect(await nodeAlive(buckets.nodes, 'lease-pause')).toBe(false);
      await eventually(async () => (await holder('lease-pause')) === l.incarnation, 20_000);
      expect(l.lost).toBe(false);
      expect(warnings.slice(before)).toContain('cluster: this node lease lapsed and was taken again');
    } finally {
      await l.release();
    }
  }, 60_000);

  it('another process took the node id while the lease had lapsed: the node stops working as it', async () => {
    let lost = 0;
    const l = lease('lease-stolen', () => lost++);
    await l.acquire();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2 * TTL + 500);
    const now = Date.now();
    const other: LeaseRecord = {
      v: 1,
      node: 'lease-stolen',
      incarnation: 'other',
      startedAt: now,
      refreshedAt: now,
    };
    expect(await createIfAbsent(buckets.nodes, 'lease-stolen', other)).not.toBeNull();
    await eventually(() => l.lost, 20_000);
    expect(lost).toBe(1);
    expect(await holder('lease-stolen')).toBe('other');
    await l.release();
    // Its release leaves the other holder's lease alone.
    expect((await buckets.nodes.kv.get(kvKey('lease-stolen')))?.operation).toBe('PUT');
  }, 60_000);
});

describe('taking a node id', () => {
  it('a live holder is found at once: a second lease of its id is refused without waiting out the lease', async () => {
    const ttl = 60_000;
    const held = new NodeLease(buckets.nodes, 'lease-dup', ttl, Date.now, logger, () => {});
    await held.acquire();
    try {
      const second = new NodeLease(buckets.nodes, 'lease-dup', ttl, Date.now, logger, () => {});
      const t0 = Date.now();
      await expect(second.acquire()).rejects.toMatchObject({
        code: 'cluster_node_id_in_use',
        message: expect.stringContaining('"lease-dup"'),
      });
      // Waiting the lease out would take two TTLs (120 s); how fast the refusal is belongs in bench/.
      expect(Date.now() - t0).toBeLessThan(ttl);
      expect(await holder('lease-dup')).toBe(held.incarnation);
    } finally {
      await held.release();
    }
  }, 60_000);

  it('a lease no process answers for (its holder died) is waited out, then taken', async () => {
    const now = Date.now();
    // Left by a process that is gone: nobody answers the holder probe, and nobody refreshes it.
    const dead: LeaseRecord = {
      v: 1,
      node: 'lease-dead',
      incarnation: 'gone',
      startedAt: now,
      refreshedAt: now,
    };
    expect(await createIfAbsent(buckets.nodes, 'lease-dead', dead)).not.toBeNull();
    const l = lease('lease-dead');
    await l.acquire();
    try {
      expect(await holder('lease-dead')).toBe(l.incarnation);
    } finally {
      await l.release();
    }
  }, 60_000);
});
