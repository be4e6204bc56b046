// The one-node fast path of a task (`AgentQueue.publishAndStart`), on a real nats-server: the
// local consumer gets the message at once, decoded as a delivery would be, and the call resolves
// once either JetStream stored the message or the local consumer started its run.
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { AGENT_STREAM, AgentQueue, type Verdict } from '../../runtime/agent-queue.ts';
import type { AgentMessage } from '../../machines/agent/machine.ts';
import { agentMessage } from '../support/agent-message.ts';
import { eventually } from '../support/runtime.ts';
import { useQueueTestServer } from './helpers.ts';

type Message = Omit<AgentMessage, 'type'>;

const server = useQueueTestServer();
const { warnings, logger } = server;

describe('publishAndStart', () => {
  it('hands the message to the local consumer as a delivery would, and JetStream still delivers it', async () => {
    const queue = await AgentQueue.open(server.nc(), logger);
    const local: Message[] = [];
    const delivered: Message[] = [];
    await queue.consume('fast', (m) => {
      delivered.push(m);
      return Promise.resolve('ack' as const);
    });
    try {
      await queue.publishAndStart('fast', agentMessage('f1', 'go'), (m) => {
        local.push(m);
        return Promise.resolve('ack');
      });
      expect(local).toEqual([agentMessage('f1', 'go')]);
      await eventually(() => delivered.length === 1, 20_000, 'the JetStream delivery');
      expect(delivered).toEqual(local);
      const info = await (await jetstreamManager(server.nc())).consumers.info(AGENT_STREAM, 'agent_fast');
      expect(info.num_pending + info.num_ack_pending).toBe(0);
    } finally {
      await queue.stop();
    }
  });

  it('refuses a message the consumer would refuse, before anything is handed over or stored', async () => {
    const queue = await AgentQueue.open(server.nc(), logger);
    const local: Message[] = [];
    const bad = { ...agentMessage('f2'), interaction: 'sideways' } as unknown as Message;
    await expect(
      queue.publishAndStart('fast', bad, (m) => {
        local.push(m);
        return Promise.resolve('ack' as Verdict);
      }),
    ).rejects.toThrow(/payload of kind agent.message is invalid at interaction/);
    expect(local).toEqual([]);
  });

  it('resolves when the run started though JetStream refused the message, and rejects when neither holds', async () => {
    const queue = await AgentQueue.open(server.nc(), logger);
    const jsm = await jetstreamManager(server.nc());
    await jsm.streams.delete(AGENT_STREAM);
    try {
      // No stream: the publish fails (no responders). The local consumer started the run (ack).
      await queue.publishAndStart('gone', agentMessage('f3'), () => Promise.resolve('ack'));
      await eventually(
        () =>
          warnings.some((w) =>
            w.includes('agent message not stored on JetStream; its run started and is stored'),
          ),
        20_000,
        'the warning that the message is only in the store',
      );
      // Not started (the agent at its cap: nak) and not stored: the caller is told.
      await expect(
        queue.publishAndStart('gone', agentMessage('f4'), () => Promise.resolve('nak')),
      ).rejects.toThrow();
      // A handler that throws is a run not started.
      await expect(
        queue.publishAndStart('gone', agentMessage('f5'), () => Promise.reject(new Error('boom'))),
      ).rejects.toThrow();
      expect(warnings).toContain('agent message handler failed');
    } finally {
      await queue.stop();
      await AgentQueue.open(server.nc(), logger);
    }
  });
});
