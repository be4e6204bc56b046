// Pull consumers on a real three-server cluster: their pull requests expire after seconds (the
// client's default is 30 s), so a consumer whose pull waited on a consumer leader that died pulls
// again from the new leader within seconds — checked on the wire (the pull requests the server
// gets) and by a message published after the leader's server was killed reaching the consumer.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_PULL_EXPIRES_MS,
  AGENT_STREAM,
  AgentQueue,
  agentStreamConfig,
} from '../../runtime/agent-queue.ts';
import { silentLogger } from '../../runtime/bus/index.ts';
import { withRetry } from '../../runtime/cluster/retry.ts';
import { RESUME_PULL_EXPIRES_MS, WORK_STREAM, WorkQueue } from '../../runtime/cluster/work-queue.ts';
import { leaderAwayFrom, startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { agentMessage } from '../support/agent-message.ts';
import { eventually } from '../support/runtime.ts';

const NS_PER_MS = 1_000_000;
let cluster: NatsCluster;
let nc: NatsConnection;
let spy: NatsConnection;
beforeAll(async () => {
  cluster = await startNatsCluster();
  // The consumers' client is connected to server 0 only (as a node's bus.url names one server).
  nc = await connect({ servers: [cluster.urls[0] as string], token: cluster.token(), timeout: 5000 });
  spy = await connect({ servers: [cluster.urls[0] as string], token: cluster.token(), timeout: 5000 });
}, 60_000);
afterAll(async () => {
  await nc?.close().catch(() => {});
  await spy?.close().catch(() => {});
  await cluster?.stop();
});

/** The `expires` (ms) of every pull request sent for `stream`/`consumer`, as the servers receive them. */
async function pulls(stream: string, consumer: string): Promise<{ expires: number[] }> {
  const seen = { expires: [] as number[] };
  const sub = spy.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`);
  void (async () => {
    for await (const m of sub) {
      const body = JSON.parse(new TextDecoder().decode(m.data)) as { expires?: number };
      seen.expires.push((body.expires ?? 0) / NS_PER_MS);
    }
  })();
  await spy.flush();
  return seen;
}

/** Kills the server leading `consumer` (moved off server 0 first); returns its index. */
async function killConsumerLeader(stream: string, consumer: string): Promise<number> {
  const victim = await leaderAwayFrom(cluster, stream, 0, { consumer });
  await cluster.kill(victim);
  return victim;
}

describe('pull consumers after a server of the cluster died', () => {
  it('the agent queue pulls with a short expiry and gets a message sent after its consumer leader died', async () => {
    const jsm = await jetstreamManager(nc);
    // Replicated like a cluster node makes it (ClusterNode.start) before the queue opens it.
    await jsm.streams.add(agentStreamConfig(3));
    const queue = await AgentQueue.open(nc, silentLogger);
    const seen = await pulls(AGENT_STREAM, 'agent_w');
    const got: string[] = [];
    await queue.consume('w', async (m) => {
      got.push(m.messageId);
      return 'ack';
    });
    await queue.publish('w', agentMessage('m1'));
    await eventually(() => got.includes('m1'), 30_000, 'the first message');
    await eventually(() => seen.expires.length > 0, 30_000, 'a pull request on the wire');
    expect(Math.max(...seen.expires)).toBeLessThanOrEqual(AGENT_PULL_EXPIRES_MS);
    expect(AGENT_PULL_EXPIRES_MS).toBeLessThanOrEqual(5000);
    const victim = await killConsumerLeader(AGENT_STREAM, 'agent_w');
    try {
      await withRetry(() => queue.publish('w', agentMessage('m2')), Date.now() + 60_000);
      await eventually(() => got.includes('m2'), 60_000, 'the message sent after the leader died');
      expect(got).toEqual(['m1', 'm2']);
    } finally {
      await queue.stop();
      await cluster.restart(victim);
    }
  }, 180_000);

  it('the resume work queue pulls with a short expiry and gets an item queued after its consumer leader died', async () => {
    const q = await WorkQueue.open(nc, { replicas: 3, ackWaitMs: 2000 }, silentLogger);
    const seen = await pulls(WORK_STREAM, 'run_resume');
    const got: string[] = [];
    await q.consume(async (item) => {
      got.push(item.runId);
      return { ack: true };
    });
    const item = (runId: string) => ({ v: 1 as const, runId, why: 'decision' as const, at: Date.now() });
    await q.publish(item('r1'), 'r1');
    await eventually(() => got.includes('r1'), 30_000, 'the first item');
    await eventually(() => seen.expires.length > 0, 30_000, 'a pull request on the wire');
    expect(Math.max(...seen.expires)).toBeLessThanOrEqual(RESUME_PULL_EXPIRES_MS);
    expect(RESUME_PULL_EXPIRES_MS).toBeLessThanOrEqual(5000);
    const victim = await killConsumerLeader(WORK_STREAM, 'run_resume');
    try {
      await withRetry(() => q.publish(item('r2'), 'r2'), Date.now() + 60_000);
      await eventually(() => got.includes('r2'), 60_000, 'the item queued after the leader died');
      expect(got).toEqual(['r1', 'r2']);
    } finally {
      await q.stop();
      await cluster.restart(victim);
    }
  }, 180_000);
});
