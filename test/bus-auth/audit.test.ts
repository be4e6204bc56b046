import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorBusFactory, agentGrant } from '../../runtime/bus/auth/index.ts';
import { defineKinds, subject, subjectPattern, Wildcard, type BusLogger } from '../../runtime/bus/index.ts';
import { openStore, Redactor, type Store } from '../../store/index.ts';
import { z } from 'zod';
import { eventually, startAuthNats } from './helpers.ts';

const kinds = defineKinds({ 'test.note': z.strictObject({ text: z.string() }) });

function recordingLogger(): BusLogger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (obj: object, msg: string): void => {
    lines.push(`${msg} ${JSON.stringify(obj)}`);
  };
  return { lines, debug: rec, info: rec, warn: rec, error: rec };
}

describe('permission violations on an actor connection are audited and logged redacted', () => {
  let s: Awaited<ReturnType<typeof startAuthNats>>;
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    s = await startAuthNats();
    dir = mkdtempSync(join(tmpdir(), 'snotra-busauth-store-'));
    store = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
  });
  afterAll(async () => {
    store?.close();
    await s?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a refused publish and a refused subscription become bus_permission_denied events; benign traffic does not', async () => {
    const logger = recordingLogger();
    const factory = new ActorBusFactory({
      minter: s.auth.minter,
      url: s.nats.url,
      kinds,
      audit: store.audit,
      logger,
    });
    const grant = agentGrant('a', { mode: 'ask' });
    const bus = await factory.connect({ agentId: 'a', name: 'actor-agent-a' }, grant);
    try {
      const got: string[] = [];
      const own = bus.subscribe(subjectPattern('agent', 'a', Wildcard.Rest), 'test.note', (e) => {
        got.push(e.payload.text);
      });
      await bus.flush();
      bus.publish(subject('agent', 'a', 'note'), 'test.note', { text: 'mine' });
      expect(await eventually(() => got.includes('mine'))).toBe(true);
      const before = store.audit.list().filter((e) => e.kind === 'bus_permission_denied').length;
      expect(before).toBe(0);

      bus.publish(subject('agent', 'b', 'message'), 'test.note', { text: 'not mine' });
      const spy = bus.subscribe(subjectPattern('agent', Wildcard.One, 'message'), 'test.note', () => {});
      await bus.flush();
      const denied = () => store.audit.list().filter((e) => e.kind === 'bus_permission_denied');
      expect(await eventually(() => denied().length === 2)).toBe(true);
      const [pub, sub] = denied();
      expect(pub).toMatchObject({
        agentId: 'a',
        status: 'denied',
        resource: 'snotra.v1.agent.b.message',
        detail: { operation: 'publish', subject: 'snotra.v1.agent.b.message', actor: 'actor-agent-a' },
      });
      expect(sub).toMatchObject({
        detail: { operation: 'subscription', subject: 'snotra.v1.agent.*.message' },
      });
      await spy.closed;
      expect(bus.stats().permissionViolations).toBe(2);
      // Its own subscription survived the refusals.
      bus.publish(subject('agent', 'a', 'note'), 'test.note', { text: 'still here' });
      expect(await eventually(() => got.includes('still here'))).toBe(true);
      own.unsubscribe();
      expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 2 });

      const logged = logger.lines.filter((l) => l.startsWith('bus: permission violation'));
      expect(logged).toHaveLength(2);
      for (const line of logger.lines) {
        expect(line).not.toMatch(/SU[A-Z2-7]{50,}/);
        expect(line).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
      }
    } finally {
      await bus.close();
    }
  });
});
