import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { errors as natsErrors, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_STREAM, AgentQueue } from '../../runtime/agent-queue.ts';
import {
  agentConsumerName,
  agentGrant,
  AGENT_STREAM_NAME,
  childGrant,
  type BusGrant,
  type MintedUser,
} from '../../runtime/bus/auth/index.ts';
import { silentLogger } from '../../runtime/bus/index.ts';
import { eventually, rawConnect, startAuthNats } from './helpers.ts';

type Started = Awaited<ReturnType<typeof startAuthNats>>;

/** A connection whose server-reported errors are collected (the client reports violations asynchronously). */
interface Watched {
  readonly nc: NatsConnection;
  readonly violations: InstanceType<typeof natsErrors.PermissionViolationError>[];
}

function watch(nc: NatsConnection): Watched {
  const violations: Watched['violations'] = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error' && s.error instanceof natsErrors.PermissionViolationError)
        violations.push(s.error);
    }
  })();
  return { nc, violations };
}

/** Collects the subjects a subscription receives. */
function collect(sub: Subscription): { subjects: string[]; error: Promise<unknown> } {
  const subjects: string[] = [];
  const error = (async () => {
    try {
      for await (const m of sub) subjects.push(m.subject);
      return null;
    } catch (err) {
      return err;
    }
  })();
  return { subjects, error };
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const ENVELOPE = { mode: 'ask', mayDelegate: true } as const;

describe('per-actor authority on the real nats-server (operator mode, JWTs minted by the gateway)', () => {
  let s: Started;
  let gateway: Watched;
  let mintedA: MintedUser;
  let mintedB: MintedUser;
  let a: Watched;
  let b: Watched;
  /** Everything published in the account, as the gateway sees it. */
  let seen: { subjects: string[] };

  const connectActor = async (m: MintedUser): Promise<Watched> =>
    watch(await rawConnect(s.nats.url, m.credentials, m.grant.inboxPrefix));

  /**
   * Proves a publish by `from` on `subject` was dropped by the server: a later marker from the
   * same connection arrives (messages of one connection keep their order), the forbidden one not.
   */
  async function assertDropped(from: Watched, subject: string, marker: string): Promise<void> {
    const before = from.violations.length;
    const start = seen.subjects.length;
    from.nc.publish(subject, enc('forbidden'));
    from.nc.publish(marker, enc('marker'));
    await from.nc.flush();
    expect(await eventually(() => seen.subjects.slice(start).includes(marker))).toBe(true);
    expect(seen.subjects.slice(start)).not.toContain(subject);
    expect(await eventually(() => from.violations.length > before)).toBe(true);
    expect(from.violations.at(-1)).toMatchObject({ operation: 'publish', subject });
  }

  async function assertSubscribeRefused(who: Watched, pattern: string, queue?: string): Promise<void> {
    const sub = who.nc.subscribe(pattern, queue === undefined ? {} : { queue });
    const c = collect(sub);
    const err = await c.error;
    expect(err).toBeInstanceOf(natsErrors.PermissionViolationError);
    expect(err).toMatchObject({ operation: 'subscription', subject: pattern });
    expect(c.subjects).toEqual([]);
  }

  beforeAll(async () => {
    s = await startAuthNats();
    const gwTarget = s.nats.target();
    gateway = watch(await rawConnect(s.nats.url, gwTarget.credentials as MintedUser['credentials']));
    const all = gateway.nc.subscribe('>');
    seen = collect(all);
    await AgentQueue.open(gateway.nc, silentLogger);
    const jsm = await jetstreamManager(gateway.nc);
    for (const id of ['a', 'b']) {
      await jsm.consumers.add(AGENT_STREAM, {
        durable_name: agentConsumerName(id),
        filter_subject: `snotra.v1.agent.${id}.message`,
        ack_policy: AckPolicy.Explicit,
      });
    }
    await gateway.nc.flush();
    mintedA = s.auth.minter.mint(agentGrant('a', ENVELOPE), { name: 'actor-agent-a' });
    mintedB = s.auth.minter.mint(agentGrant('b', ENVELOPE), { name: 'actor-agent-b' });
    a = await connectActor(mintedA);
    b = await connectActor(mintedB);
  });

  afterAll(async () => {
    for (const w of [a, b, gateway]) await w?.nc.close().catch(() => {});
    await s?.cleanup();
  });

  it('the grant names the same stream the runtime creates', () => {
    expect(AGENT_STREAM_NAME).toBe(AGENT_STREAM);
  });

  it('benign: an actor publishes and subscribes on its own subjects', async () => {
    const own = collect(a.nc.subscribe('snotra.v1.agent.a.>'));
    await a.nc.flush();
    a.nc.publish('snotra.v1.agent.a.note', enc('hi'));
    gateway.nc.publish('snotra.v1.agent.a.message-for-a', enc('hi'));
    expect(
      await eventually(
        () =>
          own.subjects.includes('snotra.v1.agent.a.note') &&
          own.subjects.includes('snotra.v1.agent.a.message-for-a'),
      ),
    ).toBe(true);
    expect(a.violations).toEqual([]);
  });

  it('benign: request/reply both ways (the actor answers the gateway; its own requests get replies on its inbox)', async () => {
    const responder = a.nc.subscribe('snotra.v1.agent.a.ping');
    void (async () => {
      for await (const m of responder) m.respond(enc('pong'));
    })();
    await a.nc.flush();
    const reply = await gateway.nc.request('snotra.v1.agent.a.ping', enc('ping'), { timeout: 5000 });
    expect(new TextDecoder().decode(reply.data)).toBe('pong');

    const service = gateway.nc.subscribe('snotra.v1.agent.a.rpc');
    const replyTo: string[] = [];
    void (async () => {
      for await (const m of service) {
        replyTo.push(m.reply ?? '');
        m.respond(enc('ok'));
      }
    })();
    await gateway.nc.flush();
    const answer = await a.nc.request('snotra.v1.agent.a.rpc', enc('q'), { timeout: 5000 });
    expect(new TextDecoder().decode(answer.data)).toBe('ok');
    expect(replyTo[0]?.startsWith('_INBOX.agent.a.')).toBe(true);
    expect(a.violations).toEqual([]);
    responder.unsubscribe();
    service.unsubscribe();
  });

  it("an actor cannot publish to another agent's subjects (both directions)", async () => {
    await assertDropped(a, 'snotra.v1.agent.b.message', 'snotra.v1.agent.a.marker1');
    await assertDropped(b, 'snotra.v1.agent.a.message', 'snotra.v1.agent.b.marker1');
    await assertDropped(a, 'snotra.v1.agent.b.child.k.note', 'snotra.v1.agent.a.marker2');
    // Look-alikes of its own namespace: a prefix is not a token.
    await assertDropped(a, 'snotra.v1.agent.ab.message', 'snotra.v1.agent.a.marker3');
    await assertDropped(a, 'snotra.v1.agent', 'snotra.v1.agent.a.marker4');
    await assertDropped(a, 'snotra.v1.run.r1.status', 'snotra.v1.agent.a.marker5');
    // Its own incoming queue: a message there would start a run under whatever task it names.
    await assertDropped(a, 'snotra.v1.agent.a.message', 'snotra.v1.agent.a.marker5b');
  });

  it("an actor cannot subscribe to another agent's subjects, nor widen with '*' or '>'", async () => {
    for (const [who, other] of [
      [a, 'b'],
      [b, 'a'],
    ] as const) {
      await assertSubscribeRefused(who, `snotra.v1.agent.${other}.message`);
      await assertSubscribeRefused(who, `snotra.v1.agent.${other}.>`);
      await assertSubscribeRefused(who, `snotra.v1.agent.${other}.message`, 'q1');
    }
    for (const pattern of [
      'snotra.v1.agent.*.message',
      'snotra.v1.agent.*.>',
      'snotra.v1.agent.>',
      'snotra.v1.>',
      'snotra.>',
      '*.v1.agent.b.message',
      '*.*.*.b.*',
      '>',
      '$JS.ACK.>',
      `$JS.ACK.${AGENT_STREAM}.${agentConsumerName('b')}.>`,
      'snotra.v1.approval.>',
    ]) {
      await assertSubscribeRefused(a, pattern);
    }
    // Still connected and working after the refusals.
    await assertDropped(a, 'snotra.v1.agent.b.again', 'snotra.v1.agent.a.marker6');
  });

  it("an actor cannot snoop another actor's request replies through _INBOX", async () => {
    for (const pattern of [
      '_INBOX.>',
      '_INBOX.agent.>',
      '_INBOX.agent.a.>',
      '_INBOX.agent.*.>',
      '_INBOX.*.a.>',
      '_INBOX.agent.a.*',
      '_INBOX.agent.a.*.*',
      '_INBOX.gateway.>',
    ]) {
      await assertSubscribeRefused(b, pattern);
    }
    // A's reply travels while B tries: B holds no subscription that could see it.
    const service = gateway.nc.subscribe('snotra.v1.agent.a.secret-rpc');
    void (async () => {
      for await (const m of service) m.respond(enc('for a only'));
    })();
    await gateway.nc.flush();
    const reply = await a.nc.request('snotra.v1.agent.a.secret-rpc', enc('q'), { timeout: 5000 });
    expect(reply.subject.startsWith('_INBOX.agent.a.')).toBe(true);
    // B cannot publish into A's inbox either (a forged reply), on a live or a made-up inbox.
    expect(await eventually(() => seen.subjects.includes(reply.subject))).toBe(true);
    const forged = `${reply.subject.slice(0, reply.subject.lastIndexOf('.'))}.forged`;
    await assertDropped(b, reply.subject, 'snotra.v1.agent.b.marker2a');
    await assertDropped(b, forged, 'snotra.v1.agent.b.marker2');
    await assertDropped(b, '_INBOX.agent.a.forged', 'snotra.v1.agent.b.marker2b');
    service.unsubscribe();
  });

  it("an agent named like the gateway cannot read the gateway's replies", async () => {
    const minted = s.auth.minter.mint(agentGrant('gateway', ENVELOPE), { name: 'actor-agent-gateway' });
    expect(minted.grant.inboxPrefix).toBe('_INBOX.agent.gateway');
    const impostor = await connectActor(minted);
    try {
      await assertSubscribeRefused(impostor, '_INBOX.gateway.>');
      await assertSubscribeRefused(impostor, '_INBOX.gateway.*.*');
    } finally {
      await impostor.nc.close();
    }
  });

  it("an actor cannot pull, read or acknowledge another agent's JetStream messages", async () => {
    const js = jetstream(gateway.nc);
    await js.publish('snotra.v1.agent.a.message', enc('for a'), { msgID: 'm-a-1' });
    await assertDropped(
      b,
      `$JS.API.CONSUMER.MSG.NEXT.${AGENT_STREAM}.${agentConsumerName('a')}`,
      'snotra.v1.agent.b.marker3',
    );
    await assertDropped(b, `$JS.API.STREAM.MSG.GET.${AGENT_STREAM}`, 'snotra.v1.agent.b.marker4');
    await assertDropped(
      b,
      `$JS.API.CONSUMER.CREATE.${AGENT_STREAM}.spy.snotra.v1.agent.a.message`,
      'snotra.v1.agent.b.marker5',
    );
    await assertDropped(
      b,
      `$JS.API.CONSUMER.DURABLE.CREATE.${AGENT_STREAM}.spy`,
      'snotra.v1.agent.b.marker6',
    );
    await assertDropped(
      b,
      `$JS.ACK.${AGENT_STREAM}.${agentConsumerName('a')}.1.1.1.0.0`,
      'snotra.v1.agent.b.marker7',
    );
    await assertDropped(b, '$KV.SNOTRA_INBOX.approval-1', 'snotra.v1.agent.b.marker8');
    // Through the client API: the consumer of another agent cannot even be looked up.
    await expect(jetstream(b.nc).consumers.get(AGENT_STREAM, agentConsumerName('a'))).rejects.toThrow();
  });

  it('benign: an actor consumes and acknowledges its own JetStream messages', async () => {
    const violationsBefore = b.violations.length;
    const queue = await AgentQueue.open(gateway.nc, silentLogger);
    await queue.publish('b', {
      messageId: 'msg-b-1',
      sessionId: 's',
      taskId: null,
      parentRunId: null,
      surface: 'cli',
      interaction: 'attended',
      text: 'hello b',
    });
    const consumer = await jetstream(b.nc).consumers.get(AGENT_STREAM, agentConsumerName('b'));
    const m = await consumer.next({ expires: 5000 });
    expect(m?.subject).toBe('snotra.v1.agent.b.message');
    m?.ack();
    await b.nc.flush();
    const jsm = await jetstreamManager(gateway.nc);
    expect(
      await (async () => {
        const end = Date.now() + 10_000;
        while (Date.now() < end) {
          const info = await jsm.consumers.info(AGENT_STREAM, agentConsumerName('b'));
          if (info.ack_floor.stream_seq >= (m?.seq ?? Infinity)) return true;
          await new Promise((r) => setTimeout(r, 20));
        }
        return false;
      })(),
    ).toBe(true);
    expect(b.violations.slice(violationsBefore)).toEqual([]);
  });

  it('only the gateway identity can publish an approval decision', async () => {
    const listener = collect(gateway.nc.subscribe('snotra.v1.approval.*.resolved'));
    await gateway.nc.flush();
    await assertDropped(a, 'snotra.v1.approval.ap1.resolved', 'snotra.v1.agent.a.marker7');
    await assertDropped(b, 'snotra.v1.approval.ap1.requested', 'snotra.v1.agent.b.marker9');
    gateway.nc.publish('snotra.v1.approval.ap2.resolved', enc('{}'));
    expect(await eventually(() => listener.subjects.includes('snotra.v1.approval.ap2.resolved'))).toBe(true);
    expect(listener.subjects).not.toContain('snotra.v1.approval.ap1.resolved');
    // Minting refuses an actor grant that could publish a decision, however it is spelled.
    const widened = (allow: string[]): BusGrant => ({
      ...agentGrant('a', ENVELOPE),
      pub: { allow, deny: [] },
    });
    for (const allow of [
      ['>'],
      ['snotra.>'],
      ['snotra.v1.*.ap1.resolved'],
      ['snotra.v1.approval.ap1.resolved'],
    ]) {
      expect(() => s.auth.minter.mint(widened(allow), { name: 'x' })).toThrow(
        expect.objectContaining({ code: 'bus_invalid_grant' }),
      );
    }
  });

  it('a grant that allows nothing on a side allows nothing there (an empty allow list is not "all")', async () => {
    // A parent in mode deny publishes nothing of its own, so its child's publish allow list is empty.
    const parent = agentGrant('a', { mode: 'deny' });
    const child = childGrant(parent, { agentId: 'a', path: [] }, { mode: 'deny', mayDelegate: true }, 'k9');
    expect(child.grant.pub.allow).toEqual([]);
    const k9 = await connectActor(s.auth.minter.mint(child.grant, { name: 'actor-a-k9' }));
    try {
      const start = seen.subjects.length;
      for (const subj of ['snotra.v1.agent.a.child.k9.note', 'snotra.v1.agent.b.message', 'anything']) {
        k9.nc.publish(subj, enc('x'));
      }
      await k9.nc.flush();
      expect(await eventually(() => k9.violations.length >= 3)).toBe(true);
      // It cannot publish a marker of its own: k9's publishes were flushed (the server routed them)
      // before the gateway's marker, so the marker arriving first-and-alone proves the drop.
      gateway.nc.publish('snotra.v1.agent.a.gateway-marker', enc('m'));
      expect(
        await eventually(() => seen.subjects.slice(start).includes('snotra.v1.agent.a.gateway-marker')),
      ).toBe(true);
      for (const subj of ['snotra.v1.agent.a.child.k9.note', 'snotra.v1.agent.b.message', 'anything']) {
        expect(seen.subjects.slice(start)).not.toContain(subj);
      }
    } finally {
      await k9.nc.close();
    }
  });

  it("a sub-agent's credentials are nested in its parent's and exclude its siblings'", async () => {
    const parent = agentGrant('a', ENVELOPE);
    const c1 = childGrant(parent, { agentId: 'a', path: [] }, ENVELOPE, 'k1', {
      pub: ['snotra.v1.agent.b.message', '>', 'snotra.v1.agent.a.note'],
    });
    expect(c1.narrowed.map((n) => n.pattern)).toEqual(['snotra.v1.agent.b.message', '>']);
    const c2 = childGrant(parent, { agentId: 'a', path: [] }, ENVELOPE, 'k2');
    const k1 = await connectActor(s.auth.minter.mint(c1.grant, { name: 'actor-a-k1' }));
    const k2 = await connectActor(s.auth.minter.mint(c2.grant, { name: 'actor-a-k2' }));
    try {
      await assertDropped(k1, 'snotra.v1.agent.a.child.k2.note', 'snotra.v1.agent.a.child.k1.marker');
      await assertDropped(k1, 'snotra.v1.agent.b.message', 'snotra.v1.agent.a.child.k1.marker2');
      await assertSubscribeRefused(k1, 'snotra.v1.agent.a.>');
      await assertSubscribeRefused(k1, '_INBOX.agent.a.d_k2.>');
      await assertSubscribeRefused(k2, '_INBOX.agent.a.>');
      await assertSubscribeRefused(k2, '_INBOX.agent.a.*.*');
      // The parent covers its children: it hears what a child publishes in its namespace.
      const heard = collect(a.nc.subscribe('snotra.v1.agent.a.child.>'));
      await a.nc.flush();
      k1.nc.publish('snotra.v1.agent.a.note', enc('granted by request'));
      k1.nc.publish('snotra.v1.agent.a.child.k1.status', enc('ok'));
      expect(await eventually(() => heard.subjects.includes('snotra.v1.agent.a.child.k1.status'))).toBe(true);
      expect(await eventually(() => seen.subjects.includes('snotra.v1.agent.a.note'))).toBe(true);
    } finally {
      await k1.nc.close();
      await k2.nc.close();
    }
  });
});
