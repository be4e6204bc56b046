import type { AuthorityEnvelope } from '../../../policy/delegation/index.ts';
import { AGENT_STREAM_NAME, agentConsumerName } from './stream-names.ts';
import { BusError, BusErrorCode } from '../errors.ts';
import { subject, subjectPattern, SUBJECT_PREFIX, Wildcard } from '../subjects.ts';
import { covers, matches, overlaps, tokensOf } from './patterns.ts';

/**
 * What one identity on the bus may do: the subjects it may publish to and subscribe to (deny wins
 * over allow, and anything not allowed is refused by the server), the prefix of its request
 * inboxes, and whether it may answer requests sent to it.
 */
export interface BusGrant {
  readonly pub: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  readonly sub: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  /** The client's `inboxPrefix`: its replies arrive on `<inboxPrefix>.<id>`. */
  readonly inboxPrefix: string;
  /** May publish one reply to the reply subject of each request it receives. */
  readonly respond: boolean;
}

/** Where an actor's subjects live: `snotra.v1.agent.<agent>[.child.<key>]*`, and its inbox. */
export interface ActorScope {
  /** The top-level agent whose namespace this is. */
  readonly agentId: string;
  /** The delegation path below the agent: one key per spawned generation, outermost first. */
  readonly path: readonly string[];
}

/**
 * Subjects only the gateway may publish to: approval requests and decisions
 * (`snotra.v1.approval.<id>.requested|resolved`). Every actor grant denies them.
 */
export const DECISION_SUBJECTS: readonly string[] = [subjectPattern('approval', Wildcard.Rest)];

/**
 * The agents' incoming message queue (`snotra.v1.agent.<id>.message`, the JetStream stream the
 * surfaces feed through the gateway). A message there starts a run with the surface, session,
 * task and interaction it names, so an actor publishing one, even to itself, could start runs
 * under another task's standing approvals: only the gateway publishes them.
 */
export const AGENT_INPUT_SUBJECTS: readonly string[] = [subjectPattern('agent', Wildcard.One, 'message')];

/**
 * Denied to every actor whatever its allow list says (the allow list already excludes them; the
 * deny makes a future widening of an allow list fail safe): decisions, the system account, the
 * key-value and JetStream management APIs.
 */
export const ACTOR_DENY: readonly string[] = [
  ...DECISION_SUBJECTS,
  ...AGENT_INPUT_SUBJECTS,
  '$SYS.>',
  '$KV.>',
  '$JS.API.STREAM.>',
  '$JS.API.CONSUMER.CREATE.>',
  '$JS.API.CONSUMER.DURABLE.>',
  '$JS.API.CONSUMER.DELETE.>',
];

/** The gateway: the runtime's own connection. It manages streams and is the only publisher of decisions. */
export function gatewayGrant(): BusGrant {
  return {
    pub: { allow: ['>'], deny: [] },
    sub: { allow: ['>'], deny: [] },
    inboxPrefix: '_INBOX.gateway',
    respond: true,
  };
}

function checkKey(key: string, what: string): string {
  // subject() rejects '.', '*', '>', whitespace and control characters in a token.
  try {
    subject(key);
  } catch {
    throw new BusError(
      BusErrorCode.InvalidGrant,
      `${what} ${JSON.stringify(key.slice(0, 80))} cannot name a bus subject token`,
    );
  }
  return key;
}

/** `snotra.v1.agent.<agent>[.child.<key>]*` of a scope. */
export function scopeNamespace(scope: ActorScope): string {
  const parts = ['agent', checkKey(scope.agentId, 'agent id')];
  for (const k of scope.path) parts.push('child', checkKey(k, 'delegation key'));
  return `${SUBJECT_PREFIX}.${parts.join('.')}`;
}

/**
 * `_INBOX.agent.<agent>[.d_<key>]*`: a child's inboxes sit under its parent's. The `agent` level
 * keeps every agent apart from the gateway's `_INBOX.gateway` (an agent may be named `gateway`),
 * and the `d_` prefix keeps a child's level apart from the parent's own request inboxes
 * (`<prefix>.<nuid>.<n>`, a NUID being letters and digits only), whatever key a model chose.
 */
export function scopeInbox(scope: ActorScope): string {
  return [
    '_INBOX',
    'agent',
    checkKey(scope.agentId, 'agent id'),
    ...scope.path.map((k) => `d_${checkKey(k, 'delegation key')}`),
  ].join('.');
}

/**
 * The grant of a top-level agent actor, derived from its identity and its authority envelope:
 * publish and subscribe on its own agent subjects (`snotra.v1.agent.<id>.>`, which holds its
 * children's namespaces), subscribe to its inbox, and, on its JetStream consumer only, fetch the
 * next messages, read the consumer's info and acknowledge. An envelope in mode `deny` keeps the
 * receiving side (its messages still arrive, to be refused) but loses the right to publish on its
 * subjects. Nothing else: no other agent's subjects, no decisions, no stream management.
 */
export function agentGrant(agentId: string, envelope: Pick<AuthorityEnvelope, 'mode'>): BusGrant {
  const scope: ActorScope = { agentId, path: [] };
  const ns = scopeNamespace(scope);
  const inbox = scopeInbox(scope);
  const consumer = agentConsumerName(agentId);
  const pub = [
    `$JS.API.CONSUMER.MSG.NEXT.${AGENT_STREAM_NAME}.${consumer}`,
    `$JS.API.CONSUMER.INFO.${AGENT_STREAM_NAME}.${consumer}`,
    `$JS.ACK.${AGENT_STREAM_NAME}.${consumer}.>`,
  ];
  if (envelope.mode !== 'deny') pub.unshift(`${ns}.>`);
  return {
    pub: { allow: pub, deny: [...ACTOR_DENY] },
    sub: { allow: [`${ns}.>`, `${inbox}.>`], deny: [...DECISION_SUBJECTS] },
    inboxPrefix: inbox,
    respond: true,
  };
}

/** What a sub-agent's grant may ask for beyond its own namespace (each must lie inside the parent's). */
export interface ChildGrantRequest {
  readonly pub?: readonly string[];
  readonly sub?: readonly string[];
}

/** One requested subject that was left out of a child's grant, and why. */
export interface NarrowedSubject {
  readonly side: 'pub' | 'sub';
  readonly pattern: string;
  readonly reason: 'malformed' | 'not_in_parent' | 'denied_to_parent';
}

/**
 * The grant of a sub-agent spawned by the holder of `parent` at `parentScope`, under delegation
 * key `key`: its own namespace and inbox nested in the parent's, plus whatever of `request` the
 * parent's grant covers (the rest is reported in `narrowed`, never granted). The parent's
 * envelope must allow delegation. The result is always a subset of `parent`: each allowed
 * pattern is covered by one of the parent's and the parent's denies are kept.
 */
export function childGrant(
  parent: BusGrant,
  parentScope: ActorScope,
  parentEnvelope: Pick<AuthorityEnvelope, 'mode' | 'mayDelegate'>,
  key: string,
  request: ChildGrantRequest = {},
): { grant: BusGrant; scope: ActorScope; narrowed: NarrowedSubject[] } {
  if (!parentEnvelope.mayDelegate) {
    throw new BusError(
      BusErrorCode.InvalidGrant,
      `agent ${JSON.stringify(parentScope.agentId)} may not delegate: its envelope does not allow sub-agents`,
    );
  }
  const scope: ActorScope = {
    agentId: parentScope.agentId,
    path: [...parentScope.path, checkKey(key, 'delegation key')],
  };
  const ns = scopeNamespace(scope);
  const inbox = scopeInbox(scope);
  const narrowed: NarrowedSubject[] = [];
  const pick = (side: 'pub' | 'sub', own: readonly string[], asked: readonly string[] = []): string[] => {
    const p = parent[side];
    const out: string[] = [];
    for (const pattern of [...own, ...asked]) {
      if (tokensOf(pattern) === null) narrowed.push({ side, pattern, reason: 'malformed' });
      else if (!p.allow.some((a) => covers(a, pattern)))
        narrowed.push({ side, pattern, reason: 'not_in_parent' });
      else if (p.deny.some((d) => covers(d, pattern)))
        narrowed.push({ side, pattern, reason: 'denied_to_parent' });
      else if (!out.includes(pattern)) out.push(pattern);
    }
    return out;
  };
  const pubOwn = parentEnvelope.mode === 'deny' ? [] : [`${ns}.>`];
  const grant: BusGrant = {
    pub: { allow: pick('pub', pubOwn, request.pub), deny: union(parent.pub.deny, ACTOR_DENY) },
    sub: {
      allow: pick('sub', [`${ns}.>`, `${inbox}.>`], request.sub),
      deny: union(parent.sub.deny, DECISION_SUBJECTS),
    },
    inboxPrefix: inbox,
    respond: parent.respond,
  };
  return { grant, scope, narrowed };
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

/** Whether `grant` lets its holder publish (`pub`) or subscribe (`sub`) to the concrete `subject`. */
export function grantAllows(grant: BusGrant, side: 'pub' | 'sub', subjectName: string): boolean {
  const g = grant[side];
  return g.allow.some((a) => matches(a, subjectName)) && !g.deny.some((d) => matches(d, subjectName));
}

/**
 * Refuses a grant meant for an actor that could publish a decision: any publish allow that
 * overlaps the decision subjects must be denied by a pattern covering it.
 */
export function assertActorGrant(grant: BusGrant): void {
  for (const a of grant.pub.allow) {
    for (const d of DECISION_SUBJECTS) {
      if (overlaps(a, d) && !grant.pub.deny.some((x) => covers(x, d))) {
        throw new BusError(
          BusErrorCode.InvalidGrant,
          `an actor grant may not publish ${d}: approval decisions come only from the gateway`,
        );
      }
    }
  }
}
