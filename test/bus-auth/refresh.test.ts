import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ActorBusFactory, agentGrant } from '../../runtime/bus/auth/index.ts';
import { defineKinds, subject, subjectPattern, Wildcard } from '../../runtime/bus/index.ts';
import { openStore, Redactor, type Store } from '../../store/index.ts';
import { eventually, rawConnect, startAuthNats } from './helpers.ts';

const kinds = defineKinds({ 'test.note': z.strictObject({ text: z.string() }) });

describe('short-lived actor credentials (real nats-server)', () => {
  let s: Awaited<ReturnType<typeof startAuthNats>>;
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    s = await startAuthNats();
    dir = mkdtempSync(join(tmpdir(), 'snotra-busauth-refresh-'));
    store = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
  });
  afterAll(async () => {
    store?.close();
    await s?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the server cuts a live connection whose JWT expires', async () => {
    const m = s.auth.minter.mint(agentGrant('a', { mode: 'ask' }), { name: 'short', ttlMs: 1500 });
    const nc = await rawConnect(s.nats.url, m.credentials);
    const err = await Promise.race([
      nc.closed(),
      new Promise((r) => setTimeout(() => r('still open'), 20_000)),
    ]);
    expect(err).not.toBe('still open');
    expect(nc.isClosed()).toBe(true);
  });

  it('a factory connection with a lifetime is re-granted before expiry and keeps working', async () => {
    const factory = new ActorBusFactory({
      minter: s.auth.minter,
      url: s.nats.url,
      kinds,
      audit: store.audit,
      ttlMs: 2000,
    });
    const bus = await factory.connect(
      { agentId: 'a', name: 'actor-agent-a' },
      agentGrant('a', { mode: 'ask' }),
    );
    try {
      const got: string[] = [];
      bus.subscribe(subjectPattern('agent', 'a', Wildcard.Rest), 'test.note', (e) => {
        got.push(e.payload.text);
      });
      await bus.flush();
      // Past at least two lifetimes of the first JWT.
      expect(await eventually(() => factory.refreshes >= 3, 20_000)).toBe(true);
      expect(bus.nats.isClosed()).toBe(false);
      await eventually(() => {
        bus.publish(subject('agent', 'a', 'note'), 'test.note', { text: 'after refresh' });
        return got.includes('after refresh');
      }, 10_000);
      expect(got).toContain('after refresh');
      expect(store.audit.list().filter((e) => e.kind === 'bus_permission_denied')).toEqual([]);
    } finally {
      await bus.close();
    }
  });
});
