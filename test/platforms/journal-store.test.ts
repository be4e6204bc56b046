import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  hashPairingCode,
  newPairingCode,
  normalizePairingCode,
} from '../../runtime/platforms/pairing-code.ts';
import { openStore, Redactor, type Store } from '../../store/index.ts';
import { runs } from '../support/laws.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function open(): { store: Store; clock: { now: number }; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'snotra-platform-store-'));
  dirs.push(dir);
  const clock = { now: 1_800_000_000_000 };
  const path = join(dir, 'snotra.db');
  return { store: openStore({ path, redactor: new Redactor(), clock: () => clock.now }), clock, path };
}

const msg = (updateId: number, text = 'hi') => ({
  updateId,
  message: { chatId: 5, chatType: 'private', messageId: updateId, sender: 'Ada', text, sentAt: null },
});

describe('platform journals in SQLite', () => {
  it('queue: the offset moves with the updates in one transaction; an update fetched twice is queued once', () => {
    const { store, path } = open();
    const inbound = store.platforms.inbound;
    expect(inbound.offset('tg')).toBe(0);
    expect(
      inbound.queue('tg', [msg(10), msg(11), { updateId: 12, message: null }]).map((r) => r.updateId),
    ).toEqual([10, 11]);
    expect(inbound.offset('tg')).toBe(13);
    // Fetched again (the offset confirmation was lost): nothing new, the offset never goes back.
    expect(inbound.queue('tg', [msg(11), msg(12)]).map((r) => r.updateId)).toEqual([12]);
    expect(inbound.offset('tg')).toBe(13);
    expect(inbound.offset('other')).toBe(0);
    store.close();
    const again = openStore({ path, redactor: new Redactor() });
    expect(again.platforms.inbound.open('tg').map((r) => r.updateId)).toEqual([10, 11, 12]);
    again.close();
  });

  it('law: however batches overlap or repeat (lost confirmations), each update is queued exactly once and the offset only grows', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 8 }), { maxLength: 12 }),
        (batches) => {
          const { store } = open();
          const inbound = store.platforms.inbound;
          const queued: number[] = [];
          let offset = 0;
          for (const batch of batches) {
            const ids = [...new Set(batch)].sort((a, b) => a - b);
            queued.push(
              ...inbound
                .queue(
                  'tg',
                  ids.map((id) => msg(id)),
                )
                .map((r) => r.updateId),
            );
            const next = inbound.offset('tg');
            expect(next).toBeGreaterThanOrEqual(offset);
            if (ids.length > 0) expect(next).toBe(Math.max(offset, (ids.at(-1) as number) + 1));
            offset = next;
          }
          const all = new Set(batches.flat());
          expect([...queued].sort((a, b) => a - b)).toEqual([...all].sort((a, b) => a - b));
          expect(inbound.open('tg').map((r) => r.updateId)).toEqual([...all].sort((a, b) => a - b));
          store.close();
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it('a message text holding a registered secret is stored redacted', () => {
    const { store } = open();
    store.redactor.registerSecret('sekrit-value-123456');
    const [rec] = store.platforms.inbound.queue('tg', [msg(1, 'my key is sekrit-value-123456')]);
    expect(rec?.text).toBe('my key is [REDACTED]');
  });

  it('outbound: a part is claimed once; a part still sending at boot becomes unknown (audited) and is never claimed again', () => {
    const { store } = open();
    const out = store.platforms.outbound;
    const part = { key: 'telegram:5:1', part: 0, parts: 2, platformId: 'tg', chatId: 5 };
    expect(out.begin(part)).toBeNull();
    expect(out.begin(part)?.status).toBe('sending');
    out.finish('telegram:5:1', 0, { status: 'sent', remoteId: 77 });
    expect(out.begin(part)).toMatchObject({ status: 'sent', remoteId: 77 });
    expect(out.begin({ ...part, part: 1 })).toBeNull();
    expect(out.markCut('tg').map((c) => [c.key, c.part, c.status])).toEqual([['telegram:5:1', 1, 'unknown']]);
    expect(out.begin({ ...part, part: 1 })?.status).toBe('unknown');
    // A late answer cannot turn an unknown part into sent.
    out.finish('telegram:5:1', 1, { status: 'sent', remoteId: 78 });
    expect(out.parts('telegram:5:1').map((p) => p.status)).toEqual(['sent', 'unknown']);
    expect(store.audit.list().filter((e) => e.kind === 'platform_reply_unknown')).toHaveLength(1);
    expect(out.markCut('tg')).toEqual([]);
    // A part known not to have left (stopping during a rate-limit wait) is given back and claimed again later.
    const other = { key: 'telegram:5:2', part: 0, parts: 1, platformId: 'tg', chatId: 5 };
    expect(out.begin(other)).toBeNull();
    out.release('telegram:5:2', 0);
    expect(out.begin(other)).toBeNull();
    out.finish('telegram:5:2', 0, { status: 'sent', remoteId: 79 });
    out.release('telegram:5:2', 0); // a sent part is never given back
    expect(out.begin(other)?.status).toBe('sent');
  });
});

describe('pairing codes', () => {
  it('are random, 8 characters of Crockford base32, and read back however they are typed', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(newPairingCode());
    expect(seen.size).toBe(2000);
    for (const c of seen) expect(c).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    expect(normalizePairingCode(' 7kq2-m9xd ')).toBe('7KQ2M9XD');
    expect(normalizePairingCode('7KQ2 M9XD')).toBe('7KQ2M9XD');
    expect(normalizePairingCode('O1L2-I3O4')).toBe('01121304');
    for (const bad of ['', '7KQ2-M9X', '7KQ2-M9XDD', 'UUUU-1234', '7KQ2-M9X!', '７KQ2-M9XD'])
      expect(normalizePairingCode(bad)).toBeNull();
    fc.assert(
      fc.property(fc.constantFrom(...seen), (code) => {
        const canon = normalizePairingCode(code);
        expect(canon).toBe(code.replace('-', ''));
        expect(hashPairingCode('tg', canon as string)).not.toBe(hashPairingCode('other', canon as string));
      }),
      { numRuns: runs(100) },
    );
  });

  it('single use, expiring, rate-limited per chat and per connection, and locked after repeated wrong codes', () => {
    const { store, clock } = open();
    const p = store.platforms.pairing;
    const h = (c: string) => hashPairingCode('tg', c);
    expect(p.issue('tg', 5, h('AAAA0001'), 'Ada')).toMatchObject({ issued: true });
    // One open code per chat.
    expect(p.issue('tg', 5, h('AAAA0002'), 'Ada')).toEqual({ issued: false, reason: 'code_active' });
    // Expired: useless.
    clock.now += 10 * 60_000 + 1;
    expect(p.confirm('tg', h('AAAA0001'), 'local:me')).toEqual({
      paired: false,
      reason: 'invalid_or_expired',
    });
    expect(p.isPaired('tg', 5)).toBe(false);
    expect(p.issue('tg', 5, h('AAAA0003'), 'Ada')).toMatchObject({ issued: true });
    clock.now += 10 * 60_000 + 1;
    expect(p.issue('tg', 5, h('AAAA0004'), 'Ada')).toMatchObject({ issued: true });
    clock.now += 10 * 60_000 + 1;
    // Three codes in the last hour: the fourth waits.
    expect(p.issue('tg', 5, h('AAAA0005'), 'Ada')).toEqual({ issued: false, reason: 'rate_limited' });
    clock.now += 60 * 60_000;
    expect(p.issue('tg', 5, h('AAAA0006'), 'Ada')).toMatchObject({ issued: true });
    // Single use, and only on its own connection.
    expect(p.confirm('other', h('AAAA0006'), 'local:me')).toMatchObject({ paired: false });
    expect(p.confirm('tg', h('AAAA0006'), 'local:me')).toMatchObject({ paired: true, chat: { chatId: 5 } });
    expect(p.isPaired('tg', 5)).toBe(true);
    expect(p.isPaired('other', 5)).toBe(false);
    expect(p.confirm('tg', h('AAAA0006'), 'local:me')).toEqual({
      paired: false,
      reason: 'invalid_or_expired',
    });
    // Many chats: at most 20 open codes per connection.
    for (let chat = 100; chat < 120; chat++)
      expect(p.issue('tg', chat, h(`BBBB${chat}`), null).issued).toBe(true);
    expect(p.issue('tg', 200, h('CCCC0001'), null)).toEqual({ issued: false, reason: 'too_many_pending' });
    // Wrong codes: after five in ten minutes even a right one is refused, until the window passes.
    for (let i = 0; i < 4; i++)
      expect(p.confirm('tg', h(`WRONG00${i}`), 'local:me')).toMatchObject({ paired: false });
    expect(p.confirm('tg', h('BBBB0100'), 'local:me')).toMatchObject({ paired: false });
    expect(p.confirm('tg', h('BBBB100'), 'local:me')).toEqual({ paired: false, reason: 'too_many_failures' });
    clock.now += 10 * 60_000 + 1;
    expect(p.confirm('tg', h('BBBB101'), 'local:me')).toEqual({
      paired: false,
      reason: 'invalid_or_expired',
    });
    expect(store.audit.list().filter((e) => e.kind === 'platform_paired')).toHaveLength(1);
    expect(p.unpair('tg', 5, 'local:me')).toBe(true);
    expect(p.unpair('tg', 5, 'local:me')).toBe(false);
    expect(p.isPaired('tg', 5)).toBe(false);
  });
});
