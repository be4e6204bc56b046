import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, Redactor } from '../../store/index.ts';
import { assertLifecycles } from '../support/lifecycle.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const CHILD = new URL('../support/lifecycle-child.ts', import.meta.url).pathname;

function launch(
  dir: string,
  point: string,
  decision: string,
): Promise<{ code: number | null; signal: string | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childNodeArgs(CHILD), dir, point, decision], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`lifecycle child hung at ${point}: ${out} ${err}`));
    }, 45_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

function setup(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-life-')));
  writeFileSync(
    join(dir, 'snotra.config.json'),
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'w', path: '.', access: 'read-write' }] },
      agents: { worker: { mode: 'ask' } },
    }),
  );
  return dir;
}

const count = (dir: string) =>
  existsSync(join(dir, 'counter.txt'))
    ? readFileSync(join(dir, 'counter.txt'), 'utf8').split('\n').filter(Boolean).length
    : 0;

const CASES: { point: string; decision: 'approved' | 'denied'; status: string; effects: number }[] = [
  { point: 'before-approval', decision: 'approved', status: 'completed', effects: 1 },
  { point: 'parked', decision: 'approved', status: 'completed', effects: 1 },
  { point: 'after-approve', decision: 'approved', status: 'completed', effects: 1 },
  { point: 'mid-call', decision: 'approved', status: 'completed', effects: 1 },
  { point: 'after-complete', decision: 'approved', status: 'completed', effects: 1 },
  { point: 'parked', decision: 'denied', status: 'denied', effects: 0 },
  { point: 'after-approve', decision: 'denied', status: 'denied', effects: 0 },
];

describe('restart-resume: SIGKILL at each point of the lifecycle', () => {
  for (const c of CASES) {
    it(`killed ${c.point}, ${c.decision}: ends ${c.status}, the side effect happened ${c.effects} time(s)`, async () => {
      const dir = setup();
      try {
        const first = await launch(dir, c.point, c.decision);
        expect(first.signal, first.err).toBe('SIGKILL');
        expect(existsSync(join(dir, `killed-${c.point}`))).toBe(true);
        const second = await launch(dir, 'none', c.decision);
        expect(second.err).toBe('');
        expect(second.out).toContain(`done ${c.status} `);
        expect(count(dir)).toBe(c.effects);
        // And once more: nothing runs again.
        const third = await launch(dir, 'none', c.decision);
        expect(third.out).toContain(`done ${c.status} `);
        expect(count(dir)).toBe(c.effects);
        const store = openStore({
          path: join(dir, 'state', 'snotra.db'),
          redactor: new Redactor(),
          readonly: true,
        });
        try {
          expect(store.audit.verifyChain()).toMatchObject({ ok: true });
          const runId = readFileSync(join(dir, 'run-id.txt'), 'utf8');
          const entry = store.ledger.lookup(`call:${runId}:c1`);
          if (c.effects === 0) expect(entry).toBeNull();
          else expect(entry?.status).toBe(c.point === 'mid-call' ? 'interrupted' : 'completed');
          assertLifecycles(store, runId);
        } finally {
          store.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  }
});
