import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Redactor, SCHEMA_VERSION, openStore } from '../../store/index.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { tempDir, track } from './helpers.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** A state dir whose database is the frozen dump of schema version `version`. */
function stateDirAt(version: number): { stateDir: string; db: string } {
  const stateDir = join(tempDir(), 'state');
  mkdirSync(stateDir);
  const db = join(stateDir, 'snotra.db');
  const raw = new Database(db);
  raw.exec(readFileSync(join(FIXTURES, `schema-v${version}.sql`), 'utf8'));
  raw.close();
  return { stateDir, db };
}

const fileHash = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const userVersion = (path: string) => {
  const raw = new Database(path, { readonly: true });
  try {
    return raw.pragma('user_version', { simple: true });
  } finally {
    raw.close();
  }
};

async function cliJson(stateDir: string, ...argv: string[]): Promise<Record<string, unknown>> {
  const out = await runCliInProcess([...argv, '--state-dir', stateDir, '--json'], stateDir);
  expect(out.err).toBe('');
  expect(out.code).toBe(0);
  return JSON.parse(out.out) as Record<string, unknown>;
}

/** What the session of every fixture holds, as `sessions show --json` prints it. */
const trip = (v: number) => ({
  session: { sessionId: 'trip', agentId: 'assistant', title: `A trip planned at v${v}`, entries: 4, runs: 2 },
  messages: [
    {
      seq: 0,
      runId: `assistant:v${v}-r1`,
      entry: { role: 'user', text: 'Where should we go in May?' },
      compacted: true,
    },
    { seq: 1, entry: { role: 'assistant', text: 'Lisbon: mild and bright.' }, compacted: true },
    { seq: 2, runId: `assistant:v${v}-r2`, entry: { role: 'user', text: 'And in June?' }, compacted: false },
    { seq: 3, entry: { role: 'assistant', text: 'Bergen: long days, some rain.' }, compacted: false },
  ],
  compaction: { throughSeq: 2, summarized: 2, summary: `[v${v}] The user asked where to go in May: Lisbon.` },
});

describe.each([16, 17])('a store file written by schema version %i', (v) => {
  it('opens read-only for sessions show, sessions list and goal show without migrating: the same bytes, still its version', async () => {
    const { stateDir, db } = stateDirAt(v);
    const hash = fileHash(db);
    const shown = await cliJson(stateDir, 'sessions', 'show', 'trip');
    expect(shown).toMatchObject(trip(v));
    // The runs' own usage; no compaction usage before version 18.
    expect(shown.usage).toEqual({ inputTokens: 240, outputTokens: 60 });
    // One JSON line per session.
    const list = await runCliInProcess(['sessions', 'list', '--state-dir', stateDir, '--json'], stateDir);
    expect(list.code).toBe(0);
    expect(
      list.out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { sessionId: string }).sessionId),
    ).toEqual(['trip']);
    expect(await cliJson(stateDir, 'goal', 'show', 'tidy')).toMatchObject({
      goalId: 'tidy',
      objective: `make the tests pass (v${v})`,
      status: 'paused',
      iteration: 2,
      budget: { modelCalls: 12, wallTimeMs: 3_600_000 },
      used: { modelCalls: 3, toolCalls: 2, wallTimeMs: 4200 },
    });
    // Read-only: no migration, no WAL, not a byte written; a write through the store is refused.
    expect(userVersion(db)).toBe(v);
    expect(fileHash(db)).toBe(hash);
    expect(readdirSync(stateDir)).toEqual(['snotra.db']);
    const store = track(openStore({ path: db, redactor: new Redactor(), readonly: true }));
    expect(store.schemaVersion).toBe(v);
    expect(store.sessions.compactions.usage('trip')).toBeNull();
    // Version 17's trace context reads back (only writable paths read it: a version-16 file has no table).
    if (v >= 17) expect(store.runTraces.get(`assistant:v${v}-r1`)?.traceparent).toBe(TRACEPARENT);
    expect(() =>
      store.sessions.compactions.addUnkept('trip', 4, 'empty_summary', { inputTokens: 1, outputTokens: 1 }),
    ).toThrow(expect.objectContaining({ code: 'readonly_store' }));
    store.close();
    expect(fileHash(db)).toBe(hash);
  });

  it('migrates when opened writable, keeps what it held, and takes the newer records (tokens, unkept compaction calls)', async () => {
    const { stateDir, db } = stateDirAt(v);
    const store = track(openStore({ path: db, redactor: new Redactor() }));
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    expect(userVersion(db)).toBe(SCHEMA_VERSION);
    expect(store.sessions.entries('trip').map((e) => e.entry)).toEqual(trip(v).messages.map((m) => m.entry));
    expect(store.sessions.compactions.latest('trip')).toMatchObject(trip(v).compaction);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 1 });
    expect(store.runTraces.get(`assistant:v${v}-r1`)?.traceparent ?? null).toBe(v >= 17 ? TRACEPARENT : null);
    // The goal's usage before version 18 had no tokens or cost: they start from 0.
    expect(store.goals.get('tidy')?.used).toEqual({
      modelCalls: 3,
      toolCalls: 2,
      wallTimeMs: 4200,
      tokens: 0,
      costUsd: 0,
    });
    expect(store.goals.iterations('tidy').map((i) => i.status)).toEqual(['ended', 'started']);
    expect(
      store.goals.endIteration('tidy', 1, 2, 'completed: final_answer', {
        modelCalls: 1,
        toolCalls: 0,
        wallTimeMs: 10,
        tokens: 55,
      }),
    ).toBe(true);
    expect(store.goals.iteration('tidy', 1, 2)?.usage).toMatchObject({ tokens: 55 });
    // Compaction usage is kept from now on, an unkept call's too.
    expect(
      store.sessions.compactions.add('trip', 4, 'all of it', 2, { inputTokens: 10, outputTokens: 2 }),
    ).toBe(true);
    expect(
      store.sessions.compactions.addUnkept('trip', 4, 'not_kept', { inputTokens: 5, outputTokens: 1 }),
    ).toBe(true);
    store.close();
    expect((await cliJson(stateDir, 'sessions', 'show', 'trip')).usage).toEqual({
      inputTokens: 255,
      outputTokens: 63,
    });
    expect(existsSync(db)).toBe(true);
  });
});
