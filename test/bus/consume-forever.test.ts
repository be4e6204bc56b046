// A pull consumer that ends on its own is opened again: an agent whose durable consumer was
// deleted under it (as when a server's state is lost or a leader moves) still gets the messages
// sent afterwards, on a real nats-server.
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { AGENT_STREAM, AgentQueue } from '../../runtime/agent-queue.ts';
import { agentMessage } from '../support/agent-message.ts';
import { eventually } from '../support/runtime.ts';
import { useQueueTestServer } from './helpers.ts';

const server = useQueueTestServer();
const { warnings, logger } = server;

describe('a consumer that ends on its own', () => {
  it('is opened again: a message sent after its durable consumer was deleted still arrives, once', async () => {
    const queue = await AgentQueue.open(server.nc(), logger);
    const got: string[] = [];
    await queue.consume('w', (m) => {
      got.push(m.messageId);
      return Promise.resolve('ack' as const);
    });
    try {
      await queue.publish('w', agentMessage('m1'));
      await eventually(() => got.includes('m1'), 20_000, 'the first message');
      const jsm = await jetstreamManager(server.nc());
      await jsm.consumers.delete(AGENT_STREAM, 'agent_w');
      await eventually(
        () => warnings.some((w) => w.includes('the agent queue consumer ended; opening it again')),
        30_000,
        'the consumer to notice it ended',
      );
      await queue.publish('w', agentMessage('m2'));
      await eventually(() => got.includes('m2'), 30_000, 'the message sent after the consumer was deleted');
      // The durable consumer exists again, with nothing left to deliver once m2's ack (sent after
      // the handler returned, so not necessarily before this look) has reached the server.
      await eventually(
        async () => {
          const info = await jsm.consumers.info(AGENT_STREAM, 'agent_w');
          return info.num_pending + info.num_ack_pending === 0;
        },
        30_000,
        'the new consumer with nothing pending and nothing unacknowledged',
      );
      expect(got).toEqual(['m1', 'm2']);
    } finally {
      await queue.stop();
    }
  }, 90_000);
});
