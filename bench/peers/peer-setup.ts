import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The LangGraph peer's folder (`peerDir`, read-only) copied to a cache folder keyed by the hash of
 * its lockfile (`$XDG_CACHE_HOME/snotra-peers` or `<repo>/node_modules/.cache/snotra-peers`),
 * with `npm ci` run there once; its scripts are copied again every time, so the cache never runs
 * a stale bench. Returns the cache folder.
 */
export function peerSetup(peerDir: string, repo: string, log: (s: string) => void): string {
  const lock = join(peerDir, 'package-lock.json');
  if (!existsSync(lock)) throw new Error(`bench:peers: no package-lock.json in PEER_DIR ${peerDir}`);
  const key = createHash('sha256').update(readFileSync(lock)).digest('hex').slice(0, 16);
  const root = process.env.XDG_CACHE_HOME
    ? join(process.env.XDG_CACHE_HOME, 'snotra-peers')
    : join(repo, 'node_modules/.cache/snotra-peers');
  const dir = join(root, `langgraph-${key}`);
  if (!existsSync(join(dir, '.installed'))) {
    mkdirSync(root, { recursive: true });
    const tmp = mkdtempSync(join(root, 'install-'));
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(peerDir, f), join(tmp, f));
    log(`bench:peers: npm ci in ${tmp} (once per lockfile; better-sqlite3 builds from source)`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
      cwd: tmp,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    writeFileSync(join(tmp, '.installed'), `${key}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  }
  copyFileSync(join(peerDir, 'bench.mjs'), join(dir, 'bench.mjs'));
  writeFileSync(join(dir, DURABLE_BENCH), durableVariant(readFileSync(join(peerDir, 'bench.mjs'), 'utf8')));
  copyFileSync(join(here, 'langgraph-inflight.mjs'), join(dir, 'langgraph-inflight.mjs'));
  return dir;
}

/** The peer's bench with its checkpointer made durable per commit (see `durableVariant`). */
export const DURABLE_BENCH = 'bench-durable.mjs';

/**
 * LangGraph's bench with `synchronous = FULL` on its checkpointer's connection: as shipped, the
 * SqliteSaver runs WAL at better-sqlite3's default `synchronous = NORMAL`, which fsyncs only at
 * checkpoints (strace: 0.06 fsyncs per park), so a parked thread can be lost to a power cut. This
 * variant fsyncs every commit, the durability the project gives each approval. Nothing else changes.
 */
export function durableVariant(bench: string): string {
  const anchor = 'const saver = SqliteSaver.fromConnString(dbPath);';
  const at = bench.indexOf(anchor);
  if (at < 0) throw new Error(`bench:peers: the peer's bench.mjs no longer has the line "${anchor}"`);
  const line = bench.indexOf('\n', at);
  return `${bench.slice(0, line)}\n  saver.db.pragma('synchronous = FULL');${bench.slice(line)}`;
}
