import { spawn } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildChildren } from './build-children.ts';
import { BUILD_STATUS_ENV, type BuildStatus } from './build-status.ts';

/** Runs `scripts/build.mjs --if-stale`, bounded like every child of the suite; resolves with its status. */
function runBuild(root: string): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/build.mjs', '--if-stale'], {
      cwd: root,
      stdio: 'inherit',
    });
    // A build that hangs counts as failed.
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Builds dist/ when stale, then bundles the child scripts against it; never throws. */
async function build(root: string): Promise<BuildStatus> {
  const code = await runBuild(root);
  if (code !== 0) {
    console.warn('build-dist: dist/ could not be built; the tests spawn the sources through tsx instead');
    return { dist: 'failed', children: null };
  }
  try {
    return { dist: 'ok', children: await buildChildren(root) };
  } catch (err) {
    console.warn(
      `build-dist: the child scripts could not be bundled (${(err as Error).message}); they run through tsx`,
    );
    return { dist: 'ok', children: null };
  }
}

/**
 * vitest globalSetup: compiles dist/ when it is not a build of the current sources, so every
 * test that spawns `bin/snotra.js` runs the compiled JavaScript users run. A source edited while
 * the tests run makes the bin fall back to the sources, never to stale code; so does a build that
 * fails (a type error somewhere): then the tests go on, on the sources, after saying so, and
 * test/package/dist.test.ts fails. With dist/ built, it also bundles the suite's child scripts
 * against it (test/support/child-scripts.ts) and removes the bundles when the run ends.
 *
 * The build runs beside the tests, not before them: the unit tier (which spawns nothing) runs
 * first while tsc compiles, on the other core. Every integration file waits for the build's
 * status file before it starts (test/support/await-build.ts). The status file is written whole
 * (a rename), so a reader never sees half of it.
 */
export default function setup(): () => Promise<void> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const statusFile = join(mkdtempSync(join(tmpdir(), 'snotra-build-')), 'status.json');
  // Set before vitest starts its workers: they inherit it.
  process.env[BUILD_STATUS_ENV] = statusFile;
  const done = build(root).then((status) => {
    writeFileSync(`${statusFile}.tmp`, JSON.stringify(status));
    renameSync(`${statusFile}.tmp`, statusFile);
    return status;
  });
  return async () => {
    const status = await done;
    if (status.children !== null) rmSync(status.children, { recursive: true, force: true });
    rmSync(dirname(statusFile), { recursive: true, force: true });
  };
}
