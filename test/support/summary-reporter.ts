import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line, `N passed, N failed`, after the default reporter.
 * CI reads this line; nothing that failed is hidden from it: a file that fails to load, and a
 * suite or file whose own hook failed (`beforeAll`: its tests are then reported skipped, not
 * failed), each count as one failure, as does every unhandled error.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    for (const mod of testModules) {
      let sawTest = false;
      for (const test of mod.children.allTests()) {
        sawTest = true;
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
      }
      for (const suite of mod.children.allSuites()) if (suite.errors().length > 0) failed++;
      if (mod.errors().length > 0 || (!sawTest && mod.state() === 'failed')) failed++;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  }
}
