import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongFirst from './test/support/sequencer.ts';
import { ISOLATED_FILES, UNIT_FILES } from './test/tiers.ts';

/**
 * Files run at once. Most integration files wait on real processes, not on the CPU, so one
 * worker per core leaves the cores idle: vitest's default (cores - 1) is a single worker on a
 * 2-core machine. SNOTRA_TEST_WORKERS overrides it.
 */
function workers(): number {
  const given = process.env.SNOTRA_TEST_WORKERS;
  if (given === undefined || given === '') return availableParallelism() + 1;
  const n = Number(given);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`SNOTRA_TEST_WORKERS must be a positive integer, got ${JSON.stringify(given)}`);
  return n;
}

/** Whether this is the deep-laws run (scripts/test-laws-deep.mjs). */
function deepLaws(): boolean {
  const scale = process.env.SNOTRA_LAWS_SCALE;
  return scale !== undefined && scale !== '' && Number(scale) > 1;
}

const setupFiles = [
  './test/support/console-guard.ts',
  './test/support/state-home.ts',
  './test/support/cleanup-hooks.ts',
];

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Generous: CPU-heavy laws and real processes must pass on a loaded machine; a hang is caught anyway.
    // The deep laws (npm run test:laws:deep sets SNOTRA_LAWS_SCALE) have none: their time grows with
    // their runs, and so does their clean-up (a CLI --testTimeout does not reach the projects).
    testTimeout: deepLaws() ? 0 : 120_000,
    hookTimeout: deepLaws() ? 0 : 120_000,
    pool: 'forks',
    sequence: { sequencer: LongFirst },
    maxWorkers: workers(),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [...UNIT_FILES],
          // Files share their worker's modules (test/tiers.ts says what a file may not do then).
          isolate: false,
          setupFiles: ['./test/support/unit-guard.ts', ...setupFiles],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT_FILES, ...ISOLATED_FILES],
          globalSetup: ['./test/support/build-dist.ts'],
          setupFiles: ['./test/support/await-build.ts', ...setupFiles],
        },
      },
      {
        extends: true,
        test: {
          // Part of the integration tier: the files that need a fresh worker each (test/tiers.ts).
          name: 'isolated',
          include: [...ISOLATED_FILES],
          setupFiles: ['./test/support/await-build.ts', ...setupFiles],
        },
      },
    ],
  },
});
