/**
 * Bytes per parked run (issue 19): parks N runs one at a time through the real runtime (the
 * peers scenario, `bench/peers/ours.ts park`: embedded nats-server, SQLite file, an approval
 * fsynced per run), then checkpoints the WAL (`wal_checkpoint(TRUNCATE)`) and reports the file's
 * bytes per run, split by table with its indexes (the `dbstat` virtual table).
 *
 *   N=1000 node --import tsx bench/bytes.bench.ts [TREE ...]
 *
 * Each TREE is a checkout of this project (default: this one) whose `bench/peers/ours.ts` is run
 * with that tree's code, so two commits can be compared side by side (`git archive COMMIT | tar
 * -x -C DIR` and a `node_modules` link make one). `PAIRS` (default 1) repeats the set, alternating
 * the order. One JSON line per measurement on stdout, a table on stderr.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';

const N = Number(process.env.N ?? 1000);
const PAIRS = Number(process.env.PAIRS ?? 1);
const here = resolve(import.meta.dirname, '..');
const trees = process.argv.slice(2).map((t) => resolve(t));
if (trees.length === 0) trees.push(here);

interface Measurement {
  tree: string;
  commit: string;
  n: number;
  load: string;
  page_size: number;
  bytes_per_run: number;
  /** Bytes per run by table, its indexes included. */
  tables: Record<string, number>;
  /** Bytes per run of every b-tree (table or index). */
  objects: Record<string, number>;
}

function commitOf(tree: string): string {
  const git = spawnSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  return git.status === 0 ? git.stdout.trim() : 'unknown (not a git checkout)';
}

function measure(tree: string): Measurement {
  const dir = mkdtempSync(join(tmpdir(), 'snotra-bytes-'));
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  try {
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(tree, 'bench/peers/ours.ts'), 'park', dir, String(N)],
      { cwd: tree, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (child.status !== 0) {
      throw new Error(
        `${tree}: bench/peers/ours.ts park exited ${child.status}: ${child.stderr.slice(-2000)}`,
      );
    }
    const path = join(dir, 'state', 'snotra.db');
    const db = new Database(path);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      const owner = new Map(
        (
          db.prepare('SELECT name, tbl_name FROM sqlite_master').all() as { name: string; tbl_name: string }[]
        ).map((r) => [r.name, r.tbl_name]),
      );
      const objects = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all() as {
        name: string;
        bytes: number;
      }[];
      const tables: Record<string, number> = {};
      const perObject: Record<string, number> = {};
      for (const { name, bytes } of objects) {
        const table = owner.get(name) ?? name;
        tables[table] = (tables[table] ?? 0) + bytes / N;
        perObject[name] = bytes / N;
      }
      return {
        tree,
        commit: commitOf(tree),
        n: N,
        load,
        page_size: db.pragma('page_size', { simple: true }) as number,
        bytes_per_run: statSync(path).size / N,
        tables,
        objects: perObject,
      };
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Measurement[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  const order = pair % 2 === 0 ? trees : [...trees].reverse();
  for (const tree of order) {
    const m = measure(tree);
    results.push(m);
    console.log(JSON.stringify(m));
  }
}
for (const m of results) {
  process.stderr.write(
    `\n${m.commit} (${m.tree}), N ${m.n}, load ${m.load}: ${m.bytes_per_run.toFixed(0)} B per parked run\n`,
  );
  const rows = Object.entries(m.objects).sort((a, b) => b[1] - a[1]);
  for (const [name, bytes] of rows) {
    if (bytes >= 1) process.stderr.write(`  ${name.padEnd(36)} ${bytes.toFixed(1).padStart(8)}\n`);
  }
  const small = rows.filter(([, b]) => b < 1).reduce((s, [, b]) => s + b, 0);
  process.stderr.write(
    `  ${'(every object under 1 B per run)'.padEnd(36)} ${small.toFixed(1).padStart(8)}\n`,
  );
}
