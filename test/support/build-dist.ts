import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * vitest globalSetup: compiles dist/ when it is not a build of the current sources, so every
 * test that spawns `bin/snotra.js` runs the compiled JavaScript users run (a source edited
 * while the tests run makes the bin fall back to the sources, never to stale code).
 */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: root, stdio: 'inherit' });
}
