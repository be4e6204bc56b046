import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, Redactor, type Store } from '../../store/index.ts';

let dir: string | null = null;
let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe("a compaction's usage is kept with it (a real SQLite file)", () => {
  it('sums per session: tokens always, cost only once one was priced; a compaction without usage adds nothing; another session and a refused add count nothing', () => {
    dir = mkdtempSync(join(tmpdir(), 'snotra-compaction-usage-'));
    store = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
    const { sessions } = store;
    for (const id of ['s', 'other']) {
      sessions.create(id, { agentId: 'a', workspace: '/w', surface: 'test' });
      const entries = Array.from({ length: 6 }, (_, i) => ({ role: 'user', text: `m${i}` }));
      expect(sessions.appendRun({ sessionId: id, runId: `r-${id}`, status: 'completed', entries })).toBe(
        true,
      );
    }
    const c = sessions.compactions;
    expect(c.usage('s')).toBeNull();
    expect(c.add('s', 2, 'first', 2)).toBe(true);
    expect(c.usage('s')).toBeNull();
    expect(c.add('s', 4, 'second', 2, { inputTokens: 300, outputTokens: 40 })).toBe(true);
    expect(c.usage('s')).toEqual({ inputTokens: 300, outputTokens: 40 });
    expect(c.add('s', 6, 'third', 2, { inputTokens: 200, outputTokens: 10, costUsd: 0.125 })).toBe(true);
    expect(c.usage('s')).toEqual({ inputTokens: 500, outputTokens: 50, costUsd: 0.125 });
    // Refused (past the session's entries; the same cut again): nothing is counted.
    expect(c.add('s', 9, 'too far', 3, { inputTokens: 1, outputTokens: 1 })).toBe(false);
    expect(c.add('s', 6, 'again', 2, { inputTokens: 1, outputTokens: 1 })).toBe(false);
    expect(c.usage('s')).toEqual({ inputTokens: 500, outputTokens: 50, costUsd: 0.125 });
    expect(c.usage('other')).toBeNull();
    // Removed with its session.
    expect(sessions.remove('s')).toBe(true);
    expect(c.usage('s')).toBeNull();
  });

  it('a call that left no compaction (empty summary, or refused as it was kept) still counts; one without usage, or of a gone session, adds nothing', () => {
    dir = mkdtempSync(join(tmpdir(), 'snotra-compaction-usage-'));
    store = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
    const { sessions } = store;
    sessions.create('s', { agentId: 'a', workspace: '/w', surface: 'test' });
    sessions.create('other', { agentId: 'a', workspace: '/w', surface: 'test' });
    const entries = Array.from({ length: 4 }, (_, i) => ({ role: 'user', text: `m${i}` }));
    sessions.appendRun({ sessionId: 's', runId: 'r', status: 'completed', entries });
    const c = sessions.compactions;
    expect(c.addUnkept('s', 2, 'empty_summary', { inputTokens: 300, outputTokens: 4 })).toBe(true);
    expect(c.usage('s')).toEqual({ inputTokens: 300, outputTokens: 4 });
    expect(c.latest('s')).toBeNull();
    expect(c.addUnkept('s', 2, 'empty_summary', null)).toBe(false);
    expect(c.addUnkept('gone', 2, 'empty_summary', { inputTokens: 9, outputTokens: 9 })).toBe(false);
    expect(c.add('s', 2, 'kept', 2, { inputTokens: 200, outputTokens: 10 })).toBe(true);
    expect(c.addUnkept('s', 2, 'not_kept', { inputTokens: 100, outputTokens: 6, costUsd: 0.5 })).toBe(true);
    expect(c.usage('s')).toEqual({ inputTokens: 600, outputTokens: 20, costUsd: 0.5 });
    expect(c.usage('other')).toBeNull();
    expect(sessions.remove('s')).toBe(true);
    expect(c.usage('s')).toBeNull();
  });
});
