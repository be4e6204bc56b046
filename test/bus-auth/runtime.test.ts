import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { existsSync } from 'node:fs';
import {
  BusMinter,
  gatewayGrant,
  generateBusAuthKeys,
  operatorConfigLines,
  operatorJwts,
} from '../../runtime/bus/auth/index.ts';
import {
  startEmbeddedNats,
  subject,
  subjectPattern,
  Wildcard,
  type EmbeddedNats,
} from '../../runtime/bus/index.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
let external: EmbeddedNats | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  await external?.stop();
  external = null;
  fx?.cleanup();
  fx = null;
});

const NOTIFY: ScriptedStep[] = [
  {
    respond: {
      kind: 'calls',
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'done' } }],
    },
  },
  {
    expect: { kind: 'tool.result', tool: 'send_message' },
    respond: { kind: 'final', text: 'notified' },
  },
];

const config = {
  bus: { auth: 'per-actor' },
  agents: {
    worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 } },
    other: { mode: 'ask' },
  },
};

/** Waits until the agent actor has connected on its own credentials. */
async function actorBusOf(runtime: Runtime, agentId: string) {
  const end = Date.now() + 15_000;
  for (;;) {
    const bus = await runtimeInternals(runtime).actorBus(agentId);
    if (bus !== null) return bus;
    if (Date.now() > end) throw new Error(`agent ${agentId} has no bus connection of its own`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the runtime with bus.auth "per-actor"', () => {
  it('runs, parks and resumes across a restart with each agent actor on its own minted connection', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: NOTIFY });
    rt = await fx.start(model);
    expect(readFileSync(join(fx.stateDir, 'nats', 'nats-server.conf'), 'utf8')).toContain('resolver: MEMORY');
    const runId = await rt.runs.runTask('worker', 'nightly', 'tell #ops');
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({ taskId: 'nightly' })[0],
      15_000,
      'an Inbox record',
    );
    await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 10_000, 'the run to park');

    // The worker's message was pulled and acknowledged on its own connection, not the runtime's.
    const first = await actorBusOf(rt, 'worker');
    expect(first.nats).not.toBe(runtimeInternals(rt).bus.nats);
    expect(first.nats.stats().inMsgs).toBeGreaterThan(0);
    expect(first.nats.stats().outMsgs).toBeGreaterThan(0);

    // Restart on the same state dir: the stored keys are reused and the parked run resumes once.
    await rt.stop();
    rt = await fx.start(model);
    expect(rt.decide(pending.id, 'approved', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'notified' });
    expect(fx.sent()).toEqual(['#ops done']);

    const own = await actorBusOf(rt, 'worker');
    expect(own.nats).not.toBe(runtimeInternals(rt).bus.nats);
    expect(
      runtimeInternals(rt)
        .store.audit.list()
        .filter((e) => e.kind === 'bus_permission_denied'),
    ).toEqual([]);
  });

  it("an agent actor's runtime-minted connection cannot reach another agent or publish a decision; each refusal is audited", async () => {
    fx = runtimeFixture(config);
    rt = await fx.start(new ScriptedModel({}));
    const worker = await actorBusOf(rt, 'worker');
    worker.nats.publish(subject('agent', 'other', 'message'), 'x');
    worker.nats.publish(subject('approval', 'ap-1', 'resolved'), '{}');
    const snoop = worker.nats.subscribe(subjectPattern('approval', Wildcard.Rest));
    const ended = (async () => {
      try {
        for await (const m of snoop) void m;
        return null;
      } catch (err) {
        return err;
      }
    })();
    await worker.flush();
    expect(await ended).toMatchObject({ name: 'PermissionViolationError' });
    const denied = await eventually(
      () => {
        const d =
          (rt && runtimeInternals(rt))?.store.audit
            .list()
            .filter((e) => e.kind === 'bus_permission_denied') ?? [];
        return d.length === 3 ? d : null;
      },
      10_000,
      'three audited violations',
    );
    expect(denied.map((e) => [e.agentId, (e.detail as { operation: string }).operation, e.resource])).toEqual(
      [
        ['worker', 'publish', 'snotra.v1.agent.other.message'],
        ['worker', 'publish', 'snotra.v1.approval.ap-1.resolved'],
        ['worker', 'subscription', 'snotra.v1.approval.>'],
      ],
    );
    expect(fx.logs.join('')).not.toMatch(/SU[A-Z2-7]{50,}|eyJ[A-Za-z0-9_-]{20,}/);
  });

  it("a live mode change re-grants the agent actor's connection: deny drops publishing on its own subjects, ask restores it", async () => {
    fx = runtimeFixture(config);
    rt = await fx.start(
      new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'still served' } }] }),
    );
    const worker = await actorBusOf(rt, 'worker');
    const own = subject('agent', 'worker', 'note');
    const heard: string[] = [];
    const sub = runtimeInternals(rt).bus.nats.subscribe(own);
    void (async () => {
      for await (const m of sub) heard.push(new TextDecoder().decode(m.data));
    })();
    await runtimeInternals(rt).bus.flush();
    worker.nats.publish(own, 'before');
    await eventually(() => heard.includes('before'), 10_000, 'the first note');
    const denied = () =>
      (rt && runtimeInternals(rt))?.store.audit.list().filter((e) => e.kind === 'bus_permission_denied') ??
      [];
    expect(denied()).toEqual([]);

    rt.authority.setAgentMode('worker', 'deny', 'alice');
    // Until the re-grant lands, probes still pass; once the server refuses one, all later ones are refused.
    await eventually(
      () => {
        worker.nats.publish(own, 'probe');
        return denied().some((e) => e.resource === own);
      },
      15_000,
      'a publish refused under the new grant',
    );
    worker.nats.publish(own, 'while denied');
    await worker.flush();
    // The worker's publish was routed (or dropped) before its flush returned: a later gateway marker proves the drop.
    runtimeInternals(rt).bus.nats.publish(own, 'marker');
    await eventually(() => heard.includes('marker'), 10_000, 'the marker');
    expect(heard).not.toContain('while denied');
    rt.authority.setAgentMode('worker', 'ask', 'alice');
    await eventually(
      () => {
        worker.nats.publish(own, 'after');
        return heard.includes('after');
      },
      15_000,
      'publishing restored',
    );
    // The actor still pulls and acknowledges its messages on the re-granted connection.
    const runId = await rt.runs.runTask('worker', 't', 'hello');
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'still served' });
  });

  it('with bus.url: mints from the account signing key given by secret reference, on a server its administrator set up', async () => {
    // The "administrator's" server: operator mode, trusting an operator and account made here.
    const keys = generateBusAuthKeys();
    fx = runtimeFixture(config);
    const admin = new BusMinter(keys.signing, keys.account.getPublicKey()).mintGateway(gatewayGrant(), {
      name: 'admin',
    });
    external = await startEmbeddedNats({
      stateDir: join(fx.dir, 'external-nats'),
      auth: {
        configLines: operatorConfigLines(operatorJwts(keys, Math.floor(Date.now() / 1000))),
        credentials: admin.credentials,
      },
    });
    const seed = new TextDecoder().decode(keys.signing.getSeed());
    const bus = {
      url: external.url,
      auth: 'per-actor',
      signingKey: { secret: 'bus-signing' },
      account: keys.account.getPublicKey(),
    };
    const withBus = runtimeFixture({ ...config, bus });
    try {
      rt = await withBus.start(new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'hi' } }] }), {
        secretStore: new MemorySecretStore({ 'bus-signing': seed }),
      });
      expect(existsSync(join(withBus.stateDir, 'nats'))).toBe(false);
      const runId = await rt.runs.runTask('worker', 't', 'hello');
      expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
      const worker = await actorBusOf(rt, 'worker');
      worker.nats.publish(subject('agent', 'other', 'message'), 'x');
      await worker.flush();
      await eventually(
        () =>
          (rt && runtimeInternals(rt))?.store.audit.list().some((e) => e.kind === 'bus_permission_denied'),
        10_000,
        'the audited violation',
      );
      expect(withBus.logs.join('')).not.toContain(seed);
      await rt.stop();
      rt = null;
      // A signing key the server does not trust cannot connect; a missing piece names its key.
      const rogue = new TextDecoder().decode(generateBusAuthKeys().signing.getSeed());
      await expect(
        withBus.start(new ScriptedModel({}), {
          secretStore: new MemorySecretStore({ 'bus-signing': rogue }),
        }),
      ).rejects.toMatchObject({ code: 'bus_auth_failed' });
      await expect(
        withBus.start(new ScriptedModel({}), {
          secretStore: new MemorySecretStore({ 'bus-signing': 'SUnotakey' }),
        }),
      ).rejects.toThrow(/bus\.signingKey/);
    } finally {
      withBus.cleanup();
    }
  });

  it('refuses incomplete per-actor settings with bus.url, naming each key', async () => {
    fx = runtimeFixture({ ...config, bus: { auth: 'per-actor', url: 'nats://127.0.0.1:4222' } });
    await expect(fx.start(new ScriptedModel({}))).rejects.toThrow(
      /bus\.signingKey: required[\s\S]*bus\.account: required/,
    );
    expect(existsSync(join(fx.stateDir, 'snotra.db'))).toBe(false);
    const stray = runtimeFixture({ ...config, bus: { signingKey: { secret: 'k' } } });
    try {
      await expect(stray.start(new ScriptedModel({}))).rejects.toThrow(
        /bus\.signingKey and bus\.account need bus\.auth "per-actor"/,
      );
    } finally {
      stray.cleanup();
    }
  });
});
