/**
 * `GET /v1/platforms/undelivered` through a real `snotra start` sidecar: a real HTTP client with
 * the token pages through every undelivered reply part (none repeated, none missed, `next` until
 * null); bad `limit` and `after` values are 400 `bad_query` / `bad_cursor`, never a crash; no
 * token, a foreign Origin or Host are refused.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, configDir } from '../sidecar/client.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { SEEDED_UNDELIVERED, seedUndelivered } from './undelivered-seed.ts';

const TOKEN = 'undelivered-sidecar-token-0123456789abcdef';
const dirs: string[] = [];
let p: StartedProcess | null = null;
afterAll(async () => {
  if (p !== null) await stopProcess(p);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Page {
  readonly undelivered: { key: string; status: string }[];
  readonly next: string | null;
}

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('the sidecar pages through undelivered reply parts', () => {
  it(
    'every part once, page by page with next; bad limit is bad_query, a tampered cursor bad_cursor',
    { timeout: 120_000 },
    async () => {
      const dir = configDir({}, {});
      dirs.push(dir);
      mkdirSync(join(dir, 'state'), { mode: 0o700 });
      seedUndelivered(join(dir, 'state')).close();
      p = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
        SNOTRA_SIDECAR_TOKEN: TOKEN,
      });
      const ready = await p.ready(60_000);
      const port = Number(new URL(String(ready.sidecar)).port);
      const auth = { Authorization: `Bearer ${TOKEN}` };
      const get = (query: string, headers: Record<string, string> = auth) =>
        call(port, 'GET', `/v1/platforms/undelivered${query}`, { headers });

      // The whole list in one page (the largest allowed), then the same list 37 at a time.
      const whole = await get('?limit=1000');
      expect(whole.status, whole.text).toBe(200);
      const all = whole.json() as Page;
      expect(all.next).toBeNull();
      expect(all.undelivered).toHaveLength(SEEDED_UNDELIVERED);
      expect(new Set(all.undelivered.map((u) => u.key)).size).toBe(SEEDED_UNDELIVERED);
      expect(all.undelivered.some((u) => u.key.includes(':ok'))).toBe(false);
      const keys: string[] = [];
      const cursors: string[] = [];
      let after: string | null = null;
      do {
        const r = await get(`?limit=37${after === null ? '' : `&after=${encodeURIComponent(after)}`}`);
        expect(r.status, r.text).toBe(200);
        const page = r.json() as Page;
        expect(page.undelivered.length).toBe(page.next === null ? SEEDED_UNDELIVERED % 37 : 37);
        keys.push(...page.undelivered.map((u) => u.key));
        after = page.next;
        if (after !== null) cursors.push(after);
      } while (after !== null);
      expect(cursors).toHaveLength(Math.ceil(SEEDED_UNDELIVERED / 37) - 1);
      expect(keys).toEqual(all.undelivered.map((u) => u.key));
      // The default page is 100.
      const first = (await get('')).json() as Page;
      expect(first.undelivered).toEqual(all.undelivered.slice(0, 100));
      expect(first.next).not.toBeNull();

      // Bad limits: each a 400 bad_query naming `limit`.
      for (const limit of [
        '-1',
        '0',
        '1001',
        '99999999999999999999',
        'abc',
        '1e3',
        '0x10',
        '5.0',
        '%205',
        '5%20',
        '+5',
        '',
        '%00',
        '5&limit=abc',
      ]) {
        const r = await get(`?limit=${limit}`);
        expect(r.status, `limit=${limit}: ${r.text}`).toBe(400);
        expect(r.text, limit).toContain('bad_query');
        expect(r.text, limit).toContain('limit');
      }
      // A repeated cursor is as ambiguous as a repeated limit.
      const twice = await get(`?after=${cursors[0] as string}&after=${cursors[1] as string}`);
      expect(twice.status, twice.text).toBe(400);
      expect(twice.text).toContain('bad_query');
      // Bad cursors: tampered, truncated, of another shape, not base64 at all.
      const real = cursors[0] as string;
      const flipped = `${real.slice(0, 5)}${real[5] === 'A' ? 'B' : 'A'}${real.slice(6)}`;
      const tampered = [
        real.slice(0, -3),
        `${real}x`,
        'bogus',
        b64([1, 'telegram:5:f1']),
        b64([1.5, 'telegram:5:f1', 0]),
        b64({ at: 1, key: 'k', part: 0 }),
        b64(['1', "' OR 1=1 --", 0]),
        '%ZZ',
      ];
      if (
        Buffer.from(flipped, 'base64url').toString('utf8') !== Buffer.from(real, 'base64url').toString('utf8')
      )
        tampered.push(flipped);
      for (const cursor of tampered) {
        const r = await get(`?limit=10&after=${encodeURIComponent(cursor)}`);
        expect(r.status, `after=${cursor}: ${r.text}`).toBe(400);
        expect(r.text, cursor).toContain('bad_cursor');
      }
      // Look-alikes that are fine: a zero-padded limit, a well-formed cursor whose key holds SQL
      // (a position, not a query: it lists only seeded undelivered parts).
      const padded = await get('?limit=0005');
      expect(padded.status).toBe(200);
      expect((padded.json() as Page).undelivered).toEqual(all.undelivered.slice(0, 5));
      const sqlish = await get(`?after=${b64([1_800_000_000_050, "' OR 1=1 --", 0])}&limit=1000`);
      expect(sqlish.status, sqlish.text).toBe(200);
      const listed = (sqlish.json() as Page).undelivered.map((u) => u.key);
      expect(listed.every((k) => keys.includes(k))).toBe(true);
      expect(listed.length).toBeLessThan(SEEDED_UNDELIVERED);

      // No token, a wrong one, a foreign page or Host: refused, the token never echoed.
      for (const [headers, status] of [
        [{}, 401],
        [{ Authorization: 'Bearer wrong-token-wrong-token-wrong-token' }, 401],
        [{ ...auth, Origin: 'http://evil.example' }, 403],
        [{ ...auth, Host: `evil.example:${port}` }, 403],
      ] as const) {
        const r = await get('?limit=5', headers);
        expect(r.status, JSON.stringify(headers)).toBe(status);
        expect(r.text).not.toContain(TOKEN);
        expect(r.text).not.toContain('telegram:5:');
      }
    },
  );
});
