import type { NatsConnection, Subscription } from '@nats-io/transport-node';

/**
 * The subject on which a node holding its lease answers "who holds this id?" (`snotra.v1.cluster.
 * node.<id>.holder`). Node ids are 1-64 of `A-Z a-z 0-9 _ -`, valid subject tokens.
 */
export const holderSubject = (nodeId: string): string => `snotra.v1.cluster.node.${nodeId}.holder`;

/**
 * Answers holder probes for this node while it holds its lease, with its incarnation: a second
 * runtime started with the same id learns at once that the id is live, instead of waiting for the
 * lease to be refreshed (or to lapse).
 */
export function answerHolderProbes(nc: NatsConnection, nodeId: string, incarnation: string): Subscription {
  return nc.subscribe(holderSubject(nodeId), {
    callback: (err, msg) => {
      if (err === null) msg.respond(JSON.stringify({ v: 1, node: nodeId, incarnation }));
    },
  });
}

/**
 * Asks who holds `nodeId`: the live holder's incarnation, or null when no process answers (no
 * responder — the lease was left by a process that died — or no answer within `timeoutMs`).
 */
export async function probeHolder(
  nc: NatsConnection,
  nodeId: string,
  ownIncarnation: string,
  timeoutMs: number,
): Promise<string | null> {
  try {
    const reply = await nc.request(holderSubject(nodeId), '', { timeout: timeoutMs });
    const parsed = JSON.parse(reply.string()) as { node?: unknown; incarnation?: unknown };
    if (parsed.node !== nodeId || typeof parsed.incarnation !== 'string') return null;
    return parsed.incarnation === ownIncarnation ? null : parsed.incarnation;
  } catch {
    return null;
  }
}
