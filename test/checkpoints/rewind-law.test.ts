/**
 * A rewind is exact (issue 38): random sequences of real shell edits (`sed -i`, `rm`, `mv`,
 * `chmod`, `ln -s`, `mkdir -p`, `>` and `>>`) on a root, a checkpoint before each; rewinding to
 * every checkpoint, in a random order, gives the tree as it was, byte for byte, modes and links
 * included. Each rewind is itself undone through the checkpoint it took first.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../runtime/checkpoints/index.ts';
import { rewindTo } from '../../runtime/checkpoints/rewind.ts';
import { cappedRuns } from '../support/laws.ts';
import { treeOf } from './support.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-rewind-law-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const NAMES = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt', 'g'] as const;
const name = fc.constantFrom(...NAMES);
const word = fc.constantFrom('alpha', 'beta', 'gamma', 'x y', '');

/**
 * One shell edit. A command may fail (a write to a name that is now a folder or a link into
 * one): its status is not the law's business, only what the tree became. An absolute link
 * points at `$OUT`, a file outside the root in the case's own folder: a link to a host file
 * (it was /etc/hostname) let `>`, `>>` and `chmod` write through it to the host.
 */
const edit = fc.oneof(
  fc.tuple(name, word).map(([n, w]) => `mkdir -p "$(dirname ${n})" && echo '${w}' > ${n}`),
  fc.tuple(name, word).map(([n, w]) => `mkdir -p "$(dirname ${n})" && echo '${w}' >> ${n}`),
  fc.tuple(name, word, word).map(([n, a, b]) => `sed -i 's/${a || 'q'}/${b}/g' ${n} 2>/dev/null || true`),
  name.map((n) => `rm -rf ${n}`),
  fc.tuple(name, name).map(([a, b]) => `mkdir -p "$(dirname ${b})" && mv ${a} ${b} 2>/dev/null || true`),
  fc
    .tuple(name, fc.constantFrom('600', '755', '640', '700'))
    .map(([n, m]) => `chmod ${m} ${n} 2>/dev/null || true`),
  fc
    .tuple(name, fc.constantFrom('a.txt', '../outside', 'd', '"$OUT"'))
    .map(([n, t]) => `mkdir -p "$(dirname ${n})" && rm -rf ${n} && ln -s ${t} ${n}`),
  fc.constantFrom('d', 'd/e', 'h/i').map((d) => `mkdir -p ${d}`),
  fc.constantFrom('d', 'd/e').map((d) => `chmod 750 ${d} 2>/dev/null || true`),
);

let case_ = 0;

describe('rewind law', () => {
  it('rewinding to any checkpoint gives the tree back byte for byte (modes and links too), and the rewind can be undone', () => {
    fc.assert(
      fc.property(
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        fc.infiniteStream(fc.nat()),
        (edits, picks) => {
          const dir = join(base, String(case_++));
          const root = join(dir, 'root');
          const state = join(dir, 'state');
          const out = join(dir, 'outside-absolute');
          mkdirSync(join(root, 'd'), { recursive: true });
          mkdirSync(state);
          writeFileSync(join(root, 'a.txt'), 'alpha\nbeta\n');
          writeFileSync(join(root, 'd/c.txt'), 'gamma\n');
          const checkpoints = new Checkpointer(state, () => 1_000_000 + case_);
          const taken: { id: string; tree: Record<string, string> }[] = [];
          for (const cmd of edits) {
            const t = checkpoints.take(
              { runId: 'r', callId: `c${taken.length}`, sessionId: null, tool: 'shell' },
              [{ id: 'root', path: root }],
            );
            taken.push({ id: t.record.id, tree: treeOf(root) });
            const ran = spawnSync('sh', ['-c', cmd], {
              cwd: root,
              stdio: 'ignore',
              env: { ...process.env, OUT: out },
            });
            if (ran.error !== undefined) throw ran.error;
          }
          const order = taken
            .map((t, i) => ({ t, k: picks.next().value as number, i }))
            .sort((x, y) => x.k - y.k || x.i - y.i);
          for (const { t } of order) {
            const before = treeOf(root);
            const r = rewindTo(state, t.id, { dryRun: false, now: () => 2_000_000 });
            expect(treeOf(root)).toEqual(t.tree);
            // The rewind's own checkpoint undoes it.
            rewindTo(state, r.undo as string, { dryRun: false, now: () => 2_000_001 });
            expect(treeOf(root)).toEqual(before);
          }
          rmSync(dir, { recursive: true, force: true });
        },
      ),
      // Each run starts up to six real shells; 6 runs usually, at most 60 in the deep mode.
      { numRuns: cappedRuns(6, 60) },
    );
  });
});
