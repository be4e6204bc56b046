// Whether dist/ holds a build of the sources exactly as they are now. In a checkout the bin runs
// the compiled code only then, so a test or `npm run snotra` never runs code older than the
// sources; the build script (scripts/build.mjs) writes the manifest this compares against.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The folders compiled into dist/, and the files beside them that change what tsc emits. */
export const SOURCE_DIRS = ['policy', 'machines', 'actors', 'store', 'runtime', 'surfaces'];
export const SOURCE_FILES = ['index.ts', 'tsconfig.json', 'tsconfig.build.json'];
/** Written last by a build, removed first: a half-done build never counts as fresh. */
export const MANIFEST = 'dist/build-manifest.json';

const COMPILED = /\.(ts|mts|mjs)$/;
/** Copied as they are: the built web app's files (surfaces/sidecar/app). */
const COPIED = /^surfaces\/sidecar\/app\//;

/**
 * Every input of the build with its size and mtime, by path from `root`: the compiled files and
 * every folder they are in (a file added to or removed from a folder changes the folder's mtime).
 */
export function sourceStats(root) {
  const paths = [...SOURCE_FILES, ...SOURCE_DIRS];
  for (const dir of SOURCE_DIRS) {
    for (const e of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      const rel = join(e.parentPath ?? e.path, e.name).slice(root.length + 1);
      if (e.isDirectory() || (e.isFile() && (COMPILED.test(e.name) || COPIED.test(rel)))) paths.push(rel);
    }
  }
  return statsOf(root, paths.sort());
}

function statsOf(root, paths) {
  const stats = {};
  for (const p of paths) {
    const s = statSync(join(root, p));
    stats[p] = [s.isDirectory() ? 0 : s.size, s.mtimeMs];
  }
  return stats;
}

/**
 * True when every input the manifest lists still has the size and mtime it had when the build
 * started. Only stats (no folder walk): cheap enough for every CLI start (~1 ms).
 */
export function buildIsFresh(root) {
  let recorded;
  try {
    recorded = JSON.parse(readFileSync(join(root, MANIFEST), 'utf8')).sources;
    const names = Object.keys(recorded);
    const now = statsOf(root, names);
    return (
      names.length > 0 && names.every((p) => recorded[p][0] === now[p][0] && recorded[p][1] === now[p][1])
    );
  } catch {
    return false;
  }
}
