/**
 * Store throughput at the chosen durability (WAL, synchronous=NORMAL for ledger and audit; FULL
 * where `durable` is asked). Plain tsx script: `npx tsx bench/store.bench.ts`.
 * Env: BENCH_ROUNDS (default 5), BENCH_CALLS (lifecycles per round, default 20000),
 * BENCH_GROUP (calls per group commit, default 32), BENCH_ONLY (comma-separated measure names). Prints one JSON document: per measure the
 * median, min, max and spread ((max - min) / median) over the rounds, per wall-clock second and
 * per second of this process's CPU time (the second is stable on a shared, noisy machine).
 *
 * A lifecycle is the full audited path of an allowed call: `proposed`, `policy_decided` and the
 * ledger `started` row with its audit `started` event in one commit (before the tool would
 * run), then the ledger `completed` row with its audit `completed` event in a later commit.
 * "Grouped" commits the starts of a batch, then its completions; "pipelined" is the steady state
 * of group commit with a batch in flight: each commit holds the completions of the batch that
 * ran and the starts of the next (a call still starts in a commit before it runs, and finishes
 * in a later one).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Decision } from '../policy/decision.ts';
import { AuditKind, Redactor, auditFieldsFromDecision, openStore } from '../store/index.ts';
import { AUDIT_ROW_EVENTS } from '../store/audit/chain.ts';
import type { AuditEventInput, BeginCallInput, Store } from '../store/index.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const GROUP = Number(process.env.BENCH_GROUP ?? 32);

const decision: Decision = {
  decision: 'allow',
  reason: 'mode_allow',
  risk: 'write-local',
  rule: { id: 'mode.allow', source: 'mode' },
  targets: [
    {
      argument: 'path',
      input: 'src/a.ts',
      resolved: '/work/p/src/a.ts',
      root: 'project',
      access: 'read-write',
    },
  ],
  humanRequired: false,
  step: 9,
};
const decided = auditFieldsFromDecision(decision);

function withStore<T>(fn: (store: Store) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'snotra-bench-'));
  const redactor = new Redactor();
  for (let i = 0; i < 5; i++) redactor.registerSecret(`sk-bench-secret-${i}-${'x'.repeat(20)}`);
  const store = openStore({ path: join(dir, 'snotra.db'), redactor });
  try {
    return fn(store);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The inputs of one call's lifecycle, built before timing so the bench measures the store. */
interface CallInputs {
  readonly key: string;
  readonly proposed: AuditEventInput;
  readonly decided: AuditEventInput;
  readonly begin: BeginCallInput;
}

const inputCache = new Map<number, CallInputs[]>();

/** Realistic inputs: full identity, the Decision's fields and targets, the call's arguments. */
function inputsFor(round: number): CallInputs[] {
  let inputs = inputCache.get(round);
  if (inputs) return inputs;
  inputs = [];
  for (let i = 0; i < CALLS; i++) {
    const ids = {
      runId: `run-${round}`,
      sessionId: 's-1',
      agentId: 'assistant',
      surface: 'chat',
      callId: `call-${i}`,
    };
    const key = `idem-${round}-${i}`;
    inputs.push({
      key,
      proposed: {
        ...ids,
        kind: AuditKind.proposed,
        tool: 'write_file',
        detail: { args: { path: 'src/a.ts', content: `export const n = ${i};` } },
      },
      decided: { ...ids, ...decided, kind: AuditKind.policyDecided, tool: 'write_file' },
      begin: { ...ids, idempotencyKey: key, tool: 'write_file', risk: decided.risk, ruleId: decided.ruleId },
    });
  }
  inputCache.clear();
  inputCache.set(round, inputs);
  return inputs;
}

function begin(store: Store, round: number, i: number): string {
  const call = inputsFor(round)[i] as CallInputs;
  store.audit.append(call.proposed);
  store.audit.append(call.decided);
  store.ledger.beginCall(call.begin);
  return call.key;
}

function complete(store: Store, key: string, i: number): void {
  store.ledger.completeCall(key, { ok: true, bytesWritten: 20 + (i % 10) });
}

/** A throughput sample: per wall-clock second and per second of this process's CPU time. */
interface Sample {
  readonly wall: number;
  readonly cpu: number;
}

/** Times `n` units of work done by `fn`. CPU time is immune to other processes on a shared machine. */
function timed(n: number, fn: () => void): Sample {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { wall: n / wallS, cpu: n / ((cpu.user + cpu.system) / 1e6) };
}

type Measure = (round: number) => Sample;

const measures: Record<string, { unit: string; run: Measure }> = {
  auditEventsPerSec: {
    unit: 'events/s (one commit each)',
    run: (round) =>
      withStore((store) => {
        return timed(CALLS, () => {
          for (let i = 0; i < CALLS; i++) {
            store.audit.append({
              kind: AuditKind.rootChanged,
              runId: `run-${round}`,
              resource: '/w',
              detail: { i },
            });
          }
        });
      }),
  },
  auditEventsPerSecGrouped: {
    unit: `events/s (group commit of ${GROUP * 4})`,
    run: (round) =>
      withStore((store) =>
        timed(CALLS, () => {
          for (let i = 0; i < CALLS; i += GROUP * 4) {
            store.transaction(() => {
              for (let j = i; j < Math.min(i + GROUP * 4, CALLS); j++) {
                store.audit.append({
                  kind: AuditKind.rootChanged,
                  runId: `run-${round}`,
                  resource: '/w',
                  detail: { j },
                });
              }
            });
          }
        }),
      ),
  },
  lifecyclesPerSecSequential: {
    unit: 'lifecycles/s (one call at a time, 2 commits each)',
    run: (round) =>
      withStore((store) => {
        inputsFor(round);
        return timed(CALLS, () => {
          for (let i = 0; i < CALLS; i++) {
            const key = store.transaction(() => begin(store, round, i));
            complete(store, key, i);
          }
        });
      }),
  },
  lifecyclesPerSecGrouped: {
    unit: `lifecycles/s (group commit of ${GROUP} calls in flight)`,
    run: (round) =>
      withStore((store) => {
        inputsFor(round);
        return timed(CALLS, () => {
          for (let i = 0; i < CALLS; i += GROUP) {
            const keys = store.transaction(() => {
              const out: string[] = [];
              for (let j = i; j < Math.min(i + GROUP, CALLS); j++) out.push(begin(store, round, j));
              return out;
            });
            store.transaction(() => keys.forEach((key, j) => complete(store, key, i + j)));
          }
        });
      }),
  },
  lifecyclesPerSecPipelined: {
    unit: `lifecycles/s (group commit, ${GROUP} calls in flight: each commit finishes one batch and starts the next)`,
    run: (round) =>
      withStore((store) => {
        inputsFor(round);
        return timed(CALLS, () => {
          let running: string[] = [];
          for (let i = 0; i <= CALLS; i += GROUP) {
            const done = running;
            const first = i;
            running = store.transaction(() => {
              done.forEach((key, j) => complete(store, key, first - GROUP + j));
              const started: string[] = [];
              for (let j = first; j < Math.min(first + GROUP, CALLS); j++)
                started.push(begin(store, round, j));
              return started;
            });
          }
        });
      }),
  },
  sqliteFloorPerSec: {
    unit: `lifecycles/s of the bare writes (same rows, statements and sha256 chain as "grouped", no validation, redaction or result objects: what this machine allows)`,
    run: (round) =>
      withStore((store) => {
        const db = store.connection;
        const audit = db.prepare(
          'INSERT INTO audit_log (seq, last_seq, run_id, body, hashes) VALUES (?, ?, ?, ?, ?)',
        );
        const call = db.prepare(
          `INSERT INTO ledger_calls (idempotency_key, v, call_id, run_id, session_id, agent_id, surface, tool, risk,
             rule_id, resource, standing_approval_id, attempt, started_at) VALUES (?, 1, ?, ?, 's-1', 'assistant', 'chat',
             'write_file', 'write-local', 'mode.allow', NULL, NULL, 1, ?)`,
        );
        const open = db.prepare('INSERT INTO ledger_open (idempotency_key, started_at) VALUES (?, ?)');
        const close = db.prepare('DELETE FROM ledger_open WHERE idempotency_key = ?');
        const outcome = db.prepare(
          `INSERT INTO ledger_outcomes (idempotency_key, attempt, status, result, error, finished_at)
           VALUES (?, 1, 'completed', ?, NULL, ?)`,
        );
        const tx = db.transaction((fn: () => void) => fn());
        let seq = 0;
        let prev = '0'.repeat(64);
        // Rows of up to AUDIT_ROW_EVENTS events, as the store writes them.
        let bodies: string[] = [];
        let hashes: Buffer[] = [];
        const flush = (): void => {
          if (bodies.length === 0) return;
          audit.run(
            seq - bodies.length + 1,
            seq,
            `run-${round}`,
            `[${bodies.join(',')}]`,
            Buffer.concat(hashes),
          );
          bodies = [];
          hashes = [];
        };
        const event = (kind: string, i: number, detail: unknown): void => {
          if (bodies.length === AUDIT_ROW_EVENTS) flush();
          seq++;
          const runId = `run-${round}`;
          const body = JSON.stringify([
            1,
            seq,
            Date.now(),
            kind,
            's-1',
            'assistant',
            'chat',
            runId,
            `call-${i}`,
            'write_file',
            'write-local',
            'mode.allow',
            '/work/p/src/a.ts',
            kind,
            null,
            JSON.stringify(detail),
          ]);
          const hash = createHash('sha256').update(`${prev}\n${body}`).digest();
          bodies.push(body);
          hashes.push(hash);
          prev = hash.toString('hex');
        };
        return timed(CALLS, () => {
          for (let i = 0; i < CALLS; i += GROUP) {
            const end = Math.min(i + GROUP, CALLS);
            tx.immediate(() => {
              for (let j = i; j < end; j++) {
                const key = `idem-${round}-${j}`;
                event('proposed', j, { args: { path: 'src/a.ts', content: `export const n = ${j};` } });
                event('policy_decided', j, decided.detail);
                call.run(key, `call-${j}`, `run-${round}`, Date.now());
                open.run(key, Date.now());
                event('started', j, { idempotencyKey: key, attempt: 1 });
              }
              flush();
            });
            tx.immediate(() => {
              for (let j = i; j < end; j++) {
                const key = `idem-${round}-${j}`;
                close.run(key);
                outcome.run(key, JSON.stringify({ ok: true, bytesWritten: 20 + (j % 10) }), Date.now());
                event('completed', j, { idempotencyKey: key, attempt: 1 });
              }
              flush();
            });
          }
        });
      }),
  },
  lifecyclesPerSecDurableSequential: {
    unit: 'lifecycles/s (started fsynced before the tool runs, one call at a time)',
    run: (round) =>
      withStore((store) => {
        inputsFor(round);
        const n = Math.min(CALLS, 2000);
        return timed(n, () => {
          for (let i = 0; i < n; i++) {
            const key = store.transaction(() => begin(store, round, i), { durable: true });
            complete(store, key, i);
          }
        });
      }),
  },
  lifecyclesPerSecDurableGrouped: {
    unit: `lifecycles/s (started fsynced, group commit of ${GROUP})`,
    run: (round) =>
      withStore((store) => {
        inputsFor(round);
        const n = Math.min(CALLS, 10_000);
        return timed(n, () => {
          for (let i = 0; i < n; i += GROUP) {
            const keys = store.transaction(
              () => {
                const out: string[] = [];
                for (let j = i; j < Math.min(i + GROUP, n); j++) out.push(begin(store, round, j));
                return out;
              },
              { durable: true },
            );
            store.transaction(() => keys.forEach((key, j) => complete(store, key, i + j)));
          }
        });
      }),
  },
};

function summarize(values: number[]): { median: number; min: number; max: number; spread: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  const min = sorted[0] as number;
  const max = sorted[sorted.length - 1] as number;
  return {
    median: Math.round(median),
    min: Math.round(min),
    max: Math.round(max),
    spread: +((max - min) / median).toFixed(3),
  };
}

const results: Record<string, unknown> = {};
const only = process.env.BENCH_ONLY;
for (const [name, measure] of Object.entries(measures)) {
  if (only !== undefined && !only.split(',').includes(name)) continue;
  measure.run(-1); // warm-up
  const samples: Sample[] = [];
  for (let round = 0; round < ROUNDS; round++) samples.push(measure.run(round));
  results[name] = {
    unit: measure.unit,
    wall: { ...summarize(samples.map((s) => s.wall)), rounds: samples.map((s) => Math.round(s.wall)) },
    perCpuSecond: summarize(samples.map((s) => s.cpu)),
  };
}

console.log(
  JSON.stringify(
    {
      bench: 'store',
      node: process.version,
      cpu: cpus()[0]?.model ?? 'unknown',
      cpus: cpus().length,
      config: {
        rounds: ROUNDS,
        calls: CALLS,
        group: GROUP,
        journal: 'WAL',
        synchronous: 'NORMAL (FULL when durable)',
      },
      results,
    },
    null,
    2,
  ),
);
