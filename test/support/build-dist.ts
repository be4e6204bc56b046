import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * vitest globalSetup: compiles dist/ when it is not a build of the current sources, so every
 * test that spawns `bin/snotra.js` runs the compiled JavaScript users run. A source edited while
 * the tests run makes the bin fall back to the sources, never to stale code; so does a build that
 * fails (a type error somewhere): then the tests go on, on the sources, after saying so, and
 * test/package/dist.test.ts fails.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  // Bounded like every synchronous child of the suite: a build that hangs counts as failed.
  const r = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 600_000,
    killSignal: 'SIGKILL',
  });
  // test/package/dist.test.ts fails on a build that failed: a broken package must not pass quietly.
  process.env.SNOTRA_TEST_DIST_BUILD = r.status === 0 ? 'ok' : 'failed';
  if (r.status !== 0)
    console.warn('build-dist: dist/ could not be built; the tests spawn the sources through tsx instead');
}
