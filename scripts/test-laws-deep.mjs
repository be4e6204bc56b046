// npm run test:laws:deep [-- <vitest filters or options>]: every test file that uses fast-check,
// each law at 100× its runs (SNOTRA_LAWS_SCALE, see test/support/laws.ts). Not part of `npm test`:
// it takes hours. A law that fails one run in thousands is a bug that ships; this is where it shows.
// Without file arguments it runs every fast-check file; given some, only those.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

function lawFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return lawFiles(p);
      return e.name.endsWith('.test.ts') && /from 'fast-check'/.test(readFileSync(p, 'utf8')) ? [p] : [];
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
