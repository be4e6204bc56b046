import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openStore, Redactor } from '../../store/index.ts';
import { assertLifecycles } from '../support/lifecycle.ts';
import { cappedRuns } from '../support/laws.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const CHILD = new URL('../support/runtime-child.ts', import.meta.url).pathname;
const CALLS = ['c1', 'c2', 'c3'];

function setup(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-crash-')));
  writeFileSync(
    join(dir, 'snotra.config.json'),
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'w', path: '.', access: 'read-write' }] },
      agents: { worker: { mode: 'allow', budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 120000 } } },
    }),
  );
  const steps = [
    ...CALLS.map((id) => ({
      respond: {
        kind: 'calls',
        calls: [{ id, tool: 'send_message', args: { channel: `#${id}`, text: 'x' } }],
      },
    })),
    { respond: { kind: 'final', text: 'all sent' } },
  ];
  writeFileSync(join(dir, 'script.json'), JSON.stringify(steps));
  return dir;
}

/** Launches the runtime child; kills it with SIGKILL after `killAfterMs` (null: let it finish). */
function launch(dir: string, killAfterMs: number | null): Promise<{ done: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childNodeArgs(CHILD), dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += String(d);
      if (killAfterMs !== null && out.includes('ready\n')) {
        setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        killAfterMs = null;
      }
    });
    child.stderr.on('data', (d) => (err += String(d)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runtime child did not finish: ${out} ${err}`));
    }, 60_000);
    child.on('exit', () => {
      clearTimeout(timer);
      const m = /done (\S+ \S+)/.exec(out);
      resolve({ done: m ? (m[1] as string) : null });
    });
  });
}

function executions(dir: string): Map<string, number> {
  const counts = new Map<string, number>();
  const file = join(dir, 'outbox.txt');
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
    const key = line.split(' ')[0] as string;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('exactly once across crashes', () => {
  it('SIGKILL at random moments: no call runs twice, and every completed call ran exactly once', async () => {
    let interrupted = 0;
    // On a loaded machine the random kills may all land before or after every call: run more
    // rounds (each a full property check) until one really cut a call short, at most four.
    for (let round = 0; round < 4 && interrupted === 0; round++) {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 150 }), { minLength: 1, maxLength: 3 }),
          async (kills) => {
            const dir = setup();
            try {
              for (const k of kills) await launch(dir, k);
              const final = await launch(dir, null);
              expect(final.done).toMatch(/^(completed|failed) /);
              const counts = executions(dir);
              for (const n of counts.values()) expect(n).toBe(1);
              const store = openStore({
                path: join(dir, 'state', 'snotra.db'),
                redactor: new Redactor(),
                readonly: true,
              });
              try {
                const runId = readFileSync(join(dir, 'run-id.txt'), 'utf8');
                for (const id of CALLS) {
                  const entry = store.ledger.lookup(`call:${runId}:${id}`);
                  if (entry?.status === 'completed') expect(counts.get(`call:${runId}:${id}`)).toBe(1);
                  if (entry === null) expect(counts.has(`call:${runId}:${id}`)).toBe(false);
                }
                interrupted += store.audit.list({ runId }).filter((e) => e.kind === 'interrupted').length;
                // Every call's audit lifecycle in the contract order, no step repeated by a restore.
                assertLifecycles(store, runId);
                expect(store.audit.verifyChain()).toMatchObject({ ok: true });
                expect(store.integrityCheck()).toBe('ok');
              } finally {
                store.close();
              }
            } finally {
              rmSync(dir, { recursive: true, force: true });
            }
          },
        ),
        // Each run starts 2-4 runtime processes (~1.5 CPU-s each): 5 per round, and deep mode
        // gets 32, not 500 (the test's 600 s).
        { numRuns: cappedRuns(5, 32) },
      );
    }
    // The kills must really have cut calls short, or this test proves nothing.
    expect(interrupted).toBeGreaterThan(0);
  }, 600_000);
});
