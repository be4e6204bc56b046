// Compiles the sources to dist/ (JavaScript + .d.ts) with tsc and records what it compiled.
//   node scripts/build.mjs          incremental: only what changed is emitted again
//   node scripts/build.mjs --clean  from scratch (npm pack runs this: no output of a deleted source ships)
//   node scripts/build.mjs --if-stale  nothing when dist/ is already a build of the current sources
// Then bundles the CLI the bin runs into dist/cli/ (scripts/bundle-cli.mjs).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsFresh, MANIFEST, SOURCE_DIRS, sourceStats } from '../bin/build-state.mjs';
import { bundleCli } from './bundle-cli.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
if (args.includes('--if-stale') && buildIsFresh(root)) process.exit(0);

// The inputs as they are before compiling: a file edited during the build makes it stale.
const sources = sourceStats(root);
rmSync(join(root, MANIFEST), { force: true });
if (args.includes('--clean')) rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
} catch {
  console.error('build: tsc failed (see above); dist/ is not usable');
  process.exit(1);
}
// Plain JavaScript modules of the sources (the search worker) and their types, as they are.
for (const dir of SOURCE_DIRS) {
  for (const f of readdirSync(join(root, dir), { recursive: true })) {
    if (!/\.(mjs|d\.mts)$/.test(f)) continue;
    mkdirSync(join(root, 'dist', dir, dirname(f)), { recursive: true });
    copyFileSync(join(root, dir, f), join(root, 'dist', dir, f));
  }
}
// The built web app the sidecar serves (static.ts finds it next to itself).
const app = join('surfaces', 'sidecar', 'app');
rmSync(join(root, 'dist', app), { recursive: true, force: true });
if (existsSync(join(root, app))) cpSync(join(root, app), join(root, 'dist', app), { recursive: true });
// The CLI the bin runs: one bundle with a chunk per command (scripts/bundle-cli.mjs).
rmSync(join(root, 'dist', 'cli'), { recursive: true, force: true });
try {
  await bundleCli(root);
} catch (err) {
  console.error(`build: bundling the CLI failed: ${err.message}`);
  process.exit(1);
}
writeFileSync(join(root, MANIFEST), `${JSON.stringify({ sources })}\n`);
