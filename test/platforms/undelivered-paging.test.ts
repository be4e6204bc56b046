/**
 * Every reply part not delivered — failed, unknown or still to send — is listed, page by page,
 * with no silent cap: the store's pages, `snotra platforms list` (all by default, `--limit` and
 * `--after` to page).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../store/index.ts';
import { platformsCommand } from '../../surfaces/cli/platforms.ts';
import type { CliIo } from '../../surfaces/cli/io.ts';
import { seedUndelivered } from './undelivered-seed.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A state dir whose journal holds the seeded parts (see undelivered-seed.ts). */
function seeded(): { stateDir: string; store: Store } {
  const stateDir = mkdtempSync(join(tmpdir(), 'snotra-undelivered-'));
  dirs.push(stateDir);
  return { stateDir, store: seedUndelivered(stateDir) };
}

function io(): CliIo & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    stdout: (t) => out.push(t),
    stderr: () => {},
    stdinLines: async function* () {},
  };
}

describe('undelivered reply parts are paged, never capped', () => {
  it('the store pages through all 320 (failed, unknown, sending), newest first, each once', () => {
    const { store } = seeded();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = store.platforms.outbound.undeliveredPage({ cursor, limit: 64 });
      pages++;
      seen.push(...page.parts.map((p) => p.key));
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(pages).toBe(5);
    expect(seen).toHaveLength(320);
    expect(new Set(seen).size).toBe(320);
    expect(seen[0]).toBe('telegram:5:s29');
    expect(seen.some((k) => k.includes(':ok'))).toBe(false);
    expect(store.platforms.outbound.undelivered().map((p) => p.key)).toEqual(seen);
    expect(() => store.platforms.outbound.undeliveredPage({ cursor: 'nope', limit: 5 })).toThrow(
      /not a cursor/,
    );
    store.close();
  });

  it('snotra platforms list shows every one by default; --limit/--after page with a next cursor', async () => {
    const { stateDir, store } = seeded();
    store.close();
    const all = io();
    await platformsCommand(['list', '--state-dir', stateDir, '--json'], all, stateDir);
    const view = JSON.parse(all.out.join('')) as { undelivered: { key: string }[]; next: string | null };
    expect(view.undelivered).toHaveLength(320);
    expect(view.next).toBeNull();
    const text = io();
    await platformsCommand(['list', '--state-dir', stateDir], text, stateDir);
    const lines = text.out.join('').split('\n');
    expect(lines.filter((l) => l.startsWith('undelivered: '))).toHaveLength(320);
    expect(lines).toContain('undelivered: telegram:5:f0 part 1/1 failed: 429 Too Many Requests');

    const keys: string[] = [];
    let after: string | null = null;
    do {
      const page = io();
      await platformsCommand(
        ['list', '--limit', '100', ...(after ? ['--after', after] : []), '--state-dir', stateDir, '--json'],
        page,
        stateDir,
      );
      const v = JSON.parse(page.out.join('')) as typeof view;
      keys.push(...v.undelivered.map((u) => u.key));
      after = v.next;
    } while (after !== null);
    expect(keys).toEqual(view.undelivered.map((u) => u.key));

    const first = io();
    await platformsCommand(['list', '--limit', '100', '--state-dir', stateDir], first, stateDir);
    expect(first.out.join('')).toMatch(
      /\nmore undelivered: snotra platforms list --limit 100 --after W\S+\n$/,
    );
    await expect(
      platformsCommand(['list', '--limit', '0', '--state-dir', stateDir], io(), stateDir),
    ).rejects.toThrow(/--limit: expected 1 to 1000/);
    await expect(
      platformsCommand(['list', '--after', 'bogus', '--state-dir', stateDir], io(), stateDir),
    ).rejects.toMatchObject({ code: 'bad_cursor' });
  });
});
