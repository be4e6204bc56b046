import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redactor, openStore } from '../../store/index.ts';
import type { Store } from '../../store/index.ts';
import { tempDir } from './helpers.ts';
import { childNodeArgs } from '../support/child-scripts.ts';
import { cappedRuns } from '../support/laws.ts';

const WRITER = join(import.meta.dirname, 'crash-writer.ts');
/**
 * SIGKILLs per run: 30 (each a writer process, ~0.6 CPU-s); the deep mode (npm run
 * test:laws:deep) takes 100× that, up to 600; SNOTRA_CRASH_KILLS sets it outright.
 */
const KILLS = Number(process.env.SNOTRA_CRASH_KILLS ?? cappedRuns(30, 600));

interface Killed {
  /** The last audit seq the child reported as committed. */
  lastCommitted: number;
  ready: boolean;
}

/** A writer process started ahead of time; it opens the store only when told to go. */
interface Writer {
  /** Starts the writer and SIGKILLs it at a random moment: while opening or mid-write. */
  goAndKill(round: number): Promise<Killed>;
  /** Kills a writer that was never told to go. */
  discard(): void;
}

function spawnWriter(path: string): Writer {
  const child = spawn(process.execPath, [...childNodeArgs(WRITER), path], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const state: Killed = { lastCommitted: 0, ready: false };
  let onCommit = (): void => {};
  let buffer = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'ready') {
        state.ready = true;
      } else if (line.startsWith('c ')) {
        state.lastCommitted = Math.max(state.lastCommitted, Number(line.slice(2)));
        onCommit();
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer exited on its own (${code}): ${stderr}`));
    });
    child.on('close', () => resolve());
  });
  const kill = (): void => void child.kill('SIGKILL');
  return {
    async goAndKill(round) {
      // Even rounds: a short delay from "go", landing while the store opens (round 0: while it
      // creates and migrates the file) or in the first writes. Odd rounds: mid-write, once the
      // writer reported 1-40 commits (counted, not timed: under load a timed kill left so few
      // writes that the run proved little), at once, while it goes on writing.
      if (round % 2 === 0) setTimeout(kill, Math.random() * 40);
      else {
        let left = 1 + Math.floor(Math.random() * 40);
        onCommit = () => {
          if (--left === 0) kill();
        };
      }
      child.stdin.write('go\n');
      await closed;
      return state;
    },
    discard() {
      kill();
      closed.catch(() => undefined);
    },
  };
}

interface Progress {
  verified: { seq: number; hash: string } | null;
}

/** Everything that must hold after a crash; returns the number of audit events. */
function checkInvariants(store: Store, killed: Killed, progress: Progress): number {
  expect(store.integrityCheck()).toBe('ok');
  const chain = store.audit.verifyChain(progress.verified ?? undefined);
  expect(chain).toMatchObject({ ok: true });
  if (chain.ok && chain.headSeq !== null) progress.verified = { seq: chain.headSeq, hash: chain.headHash };
  const head = store.audit.head()?.seq ?? 0;
  expect(head, 'a committed event was lost').toBeGreaterThanOrEqual(killed.lastCommitted);

  const db = store.connection;
  const byCall = new Map<string, Set<string>>();
  for (const row of db
    .prepare(
      "SELECT call_id, kind FROM audit_events WHERE kind IN ('started','completed','failed','interrupted')",
    )
    .iterate() as Iterable<{ call_id: string; kind: string }>) {
    const kinds = byCall.get(row.call_id) ?? new Set<string>();
    kinds.add(row.kind);
    byCall.set(row.call_id, kinds);
  }
  const ledger = db.prepare('SELECT call_id, status FROM tool_calls').all() as Array<{
    call_id: string;
    status: string;
  }>;
  const ledgerCalls = new Set(ledger.map((row) => row.call_id));
  for (const row of ledger) {
    const kinds = byCall.get(row.call_id);
    expect(kinds?.has('started'), `ledger ${row.call_id} without audit started`).toBe(true);
    if (row.status !== 'started')
      expect(kinds?.has(row.status), `ledger ${row.call_id} ${row.status} without audit`).toBe(true);
    for (const final of ['completed', 'failed']) {
      if (kinds?.has(final))
        expect(row.status, `audit ${final} for ${row.call_id} but ledger disagrees`).toBe(final);
    }
  }
  // In flight exactly when the current attempt has no outcome yet.
  const inconsistent = db
    .prepare(
      `SELECT count(*) FROM ledger_calls c
       WHERE EXISTS (SELECT 1 FROM ledger_open o WHERE o.idempotency_key = c.idempotency_key)
           = EXISTS (SELECT 1 FROM ledger_outcomes r WHERE r.idempotency_key = c.idempotency_key AND r.attempt = c.attempt)`,
    )
    .pluck()
    .get();
  expect(inconsistent, 'ledger_open disagrees with ledger_outcomes').toBe(0);
  for (const callId of byCall.keys())
    expect(ledgerCalls.has(callId), `audit for ${callId} without ledger row`).toBe(true);

  const approvals = db.prepare('SELECT id, status FROM approvals').all() as Array<{
    id: string;
    status: string;
  }>;
  const resolved = new Set(
    (
      db.prepare("SELECT detail FROM audit_events WHERE kind = 'approval_resolved'").pluck().all() as string[]
    ).map((detail) => (JSON.parse(detail) as { approvalId: string }).approvalId),
  );
  for (const approval of approvals) expect(resolved.has(approval.id)).toBe(approval.status !== 'pending');
  return head;
}

describe('crash safety', () => {
  it(
    `keeps the database, the chain and ledger/audit pairing intact across ${KILLS} SIGKILLs`,
    async () => {
      const path = join(tempDir(), 'snotra.db');
      const progress: Progress = { verified: null };
      let events = 0;
      let interrupted = 0;
      // Writers are started two rounds ahead: their start-up overlaps earlier rounds.
      const queue = [spawnWriter(path), spawnWriter(path)];
      for (let round = 0; round < KILLS; round++) {
        const run = (queue.shift() as Writer).goAndKill(round);
        queue.push(spawnWriter(path));
        const killed = await run;
        const store = openStore({ path, redactor: new Redactor() });
        try {
          checkInvariants(store, killed, progress);
          // What the runtime does at boot: calls caught mid-flight become interrupted, audited.
          interrupted += store.ledger.markInterrupted().length;
          // The count includes the `interrupted` events just written (the final chain check below
          // compares against it; counting before them failed whenever the last round had one).
          events = checkInvariants(store, killed, progress);
        } finally {
          store.close();
        }
      }
      for (const spare of queue) spare.discard();
      const store = openStore({ path, redactor: new Redactor(), readonly: true });
      try {
        expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: events });
      } finally {
        store.close();
      }
      expect(events).toBeGreaterThan(KILLS * 10);
      expect(interrupted).toBeGreaterThan(0);
    },
    120_000 + KILLS * 2_000,
  );
});
