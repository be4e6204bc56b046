/**
 * Clean-ups that helper modules want after every test. A helper cannot call `afterEach` where it
 * is defined: in the unit tier files share their worker's modules (isolate: false), so a hook at
 * a helper's top level would be registered for the first file that loads it and no other. The
 * helper registers here once; test/support/cleanup-hooks.ts (a setup file, run for every file)
 * runs them all after each test.
 */
const cleanups = new Set<() => void>();

export function afterEachTest(fn: () => void): void {
  cleanups.add(fn);
}

export function runCleanups(): void {
  for (const fn of cleanups) fn();
}
