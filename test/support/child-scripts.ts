import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Test programs the suite runs as child processes (crash tests, writers, runtime children).
 * Started through tsx, each launch transpiles its module graph again: ~2.2 CPU-seconds on this
 * machine against ~0.9 for compiled JavaScript, and the crash tests start hundreds of them. The
 * integration tier's globalSetup therefore bundles these once per run (test/support/build-children.ts):
 * the test code is bundled, our product modules are imported from dist/, which the same setup has
 * just built from the current sources. Without a usable dist/ they run through tsx as before.
 */
export const CHILD_SCRIPTS: readonly string[] = [
  'test/bus/fixtures/embedded-child.ts',
  'test/cluster/node-child.ts',
  'test/mcp/runtime-child.ts',
  'test/model-based/power-loss-child.ts',
  'test/model-based/run-restart-child.ts',
  'test/model/provider-child.ts',
  'test/processes/fixtures/runtime-standin.ts',
  'test/sandbox/fixtures/runtime-child.ts',
  'test/store/crash-writer.ts',
  'test/store/decide-worker.ts',
  'test/store/group-sync-writer.ts',
  'test/support/lifecycle-child.ts',
  'test/support/runtime-child.ts',
];

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where globalSetup puts the bundles; it names the folder in this variable once they are built. */
export const CHILDREN_ENV = 'SNOTRA_TEST_CHILDREN_DIR';

/** The bundle of a child script in `dir`. */
export function bundlePath(dir: string, script: string): string {
  return join(dir, script.replace(/\.ts$/, '.mjs'));
}

/**
 * The arguments after `node` that run `script` (an absolute path or one relative to the repo):
 * its bundle when globalSetup built them, else the source through tsx.
 */
export function childNodeArgs(script: string): string[] {
  const rel = relative(REPO_ROOT, script.startsWith('/') ? script : join(REPO_ROOT, script));
  if (!CHILD_SCRIPTS.includes(rel))
    throw new Error(`${rel} is not listed in CHILD_SCRIPTS (test/support/child-scripts.ts)`);
  const dir = process.env[CHILDREN_ENV];
  if (dir !== undefined && dir !== '') {
    const bundle = bundlePath(dir, rel);
    if (existsSync(bundle)) return [bundle];
  }
  return ['--import', 'tsx', join(REPO_ROOT, rel)];
}
