// npm run test:laws:deep [-- <vitest filters or options>]: every test file that uses fast-check,
// each law at 100× its runs (SNOTRA_LAWS_SCALE, see test/support/laws.ts). Not part of `npm test`:
// it takes hours. A law that fails one run in thousands is a bug that ships; this is where it shows.
// Without file arguments it runs every file with laws (its own or a conformance spec's); given some, only those.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

const FAST_CHECK = /from 'fast-check'/;

/** Whether a test file holds laws: it imports fast-check, or a test helper that does (a conformance spec). */
function holdsLaws(file) {
  const source = readFileSync(file, 'utf8');
  if (FAST_CHECK.test(source)) return true;
  return [...source.matchAll(/from '(\.{1,2}\/[^']+\.ts)'/g)].some(([, spec]) => {
    const helper = resolve(dirname(file), spec);
    return (
      helper.includes(`${sep}test${sep}`) &&
      existsSync(helper) &&
      FAST_CHECK.test(readFileSync(helper, 'utf8'))
    );
  });
}

function lawFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return lawFiles(p);
      return e.name.endsWith('.test.ts') && holdsLaws(p) ? [p] : [];
    })
    .sort();
}

const args = process.argv.slice(2);
const files = args.some((a) => !a.startsWith('-')) ? [] : lawFiles('test');
const r = spawnSync(
  'npx',
  // No test or hook timeout: a law's time grows with its runs (a test given its own timeout keeps it).
  ['vitest', 'run', '--testTimeout=0', '--hookTimeout=0', ...files, ...args],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      SNOTRA_LAWS_SCALE: process.env.SNOTRA_LAWS_SCALE ?? '100',
      // The suite's stall watchdog ends a file quiet for 12 min; one deep law can take longer.
      SNOTRA_TEST_STALL_MS: process.env.SNOTRA_TEST_STALL_MS ?? String(6 * 3600_000),
    },
  },
);
process.exit(r.status ?? 1);
