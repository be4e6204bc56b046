import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildChildren } from './build-children.ts';
import { CHILDREN_ENV } from './child-scripts.ts';

/**
 * vitest globalSetup: compiles dist/ when it is not a build of the current sources, so every
 * test that spawns `bin/snotra.js` runs the compiled JavaScript users run. A source edited while
 * the tests run makes the bin fall back to the sources, never to stale code; so does a build that
 * fails (a type error somewhere): then the tests go on, on the sources, after saying so, and
 * test/package/dist.test.ts fails.
 *
 * With dist/ built, it also bundles the suite's child scripts against it (test/support/child-scripts.ts)
 * and removes the bundles when the run ends.
 */
export default async function setup(): Promise<(() => void) | undefined> {
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
  if (r.status !== 0) {
    console.warn('build-dist: dist/ could not be built; the tests spawn the sources through tsx instead');
    return undefined;
  }
  try {
    const dir = await buildChildren(root);
    process.env[CHILDREN_ENV] = dir;
    return () => rmSync(dir, { recursive: true, force: true });
  } catch (err) {
    console.warn(
      `build-dist: the child scripts could not be bundled (${(err as Error).message}); they run through tsx`,
    );
    return undefined;
  }
}
