import { z } from 'zod';

/**
 * The `node` section, cluster mode (docs/cluster.md): set `node.id` and `bus.url` to share runs
 * with other nodes.
 */
export const NodeSection = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, '1-64 letters, digits, "_" or "-"')
      .describe('This runtime node\'s id in a cluster, unique per node, e.g. "node-a". Needs bus.url.'),
    leaseTtlMs: z
      .int()
      .min(500)
      .max(600_000)
      .optional()
      .describe('A node not heard from for this long counts as dead and its runs move (default 10000).'),
    resumeAckWaitMs: z
      .int()
      .min(500)
      .max(600_000)
      .optional()
      .describe('A resume held this long without a heartbeat goes to another node (default 30000).'),
  })
  .optional()
  .describe('Cluster mode: this runtime as one node of several on a NATS JetStream cluster.');
