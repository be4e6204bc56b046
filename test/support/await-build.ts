import { existsSync, readFileSync } from 'node:fs';
import { BUILD_STATUS_ENV, type BuildStatus } from './build-status.ts';
import { CHILDREN_ENV } from './child-scripts.ts';

/**
 * Setup file of the integration tiers: waits until the globalSetup's build of dist/ (and of the
 * child scripts) has ended, then tells this worker how it went (`SNOTRA_TEST_DIST_BUILD`, the
 * children's folder). A worker waits once; the files after its first find it done.
 */
async function awaitBuild(): Promise<void> {
  const file = process.env[BUILD_STATUS_ENV];
  if (file === undefined || process.env.SNOTRA_TEST_DIST_BUILD !== undefined) return;
  // The build itself is bounded (10 min); this only outlasts it.
  const end = Date.now() + 15 * 60_000;
  while (!existsSync(file)) {
    if (Date.now() > end) throw new Error(`the build of dist/ never ended (no ${file})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const status = JSON.parse(readFileSync(file, 'utf8')) as BuildStatus;
  process.env.SNOTRA_TEST_DIST_BUILD = status.dist;
  if (status.children !== null) process.env[CHILDREN_ENV] = status.children;
}

await awaitBuild();
