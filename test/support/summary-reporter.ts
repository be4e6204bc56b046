import type { Reporter, TestCase, TestModule } from 'vitest/node';
import { listProcesses } from '../../runtime/processes/index.ts';
import { describeStall, descendants, StallWatchdog } from './stall-watchdog.ts';

/**
 * A file with no test started or ended for this long is blocked (SNOTRA_TEST_STALL_MS): above the
 * longest test timeout in the suite (600 s), far below CI's 90 minutes.
 */
const STALL_MS = Number(process.env.SNOTRA_TEST_STALL_MS ?? 12 * 60_000);

/**
 * Prints one plain closing line, `N passed, N failed`, after the default reporter.
 * CI reads this line; nothing that failed is hidden from it: a file that fails to load, and a
 * suite or file whose own hook failed (`beforeAll`: its tests are then reported skipped, not
 * failed), each count as one failure, as does every unhandled error.
 *
 * A file whose worker is blocked would keep the run waiting forever (see StallWatchdog): past
 * STALL_MS the reporter names it and the tests it was running, counts it as a failure, prints the
 * closing line, kills the run's child processes and exits 1.
 */
export default class SummaryReporter implements Reporter {
  readonly #modules = new Set<TestModule>();
  readonly #watchdog = new StallWatchdog(STALL_MS);
  #timer: NodeJS.Timeout | null = null;

  onTestRunStart(): void {
    this.#timer = setInterval(() => void this.#check(), Math.min(5_000, Math.max(100, STALL_MS / 4)));
    this.#timer.unref();
  }

  onTestModuleStart(m: TestModule): void {
    this.#modules.add(m);
    this.#watchdog.fileStarted(m.relativeModuleId, Date.now());
  }

  onTestCaseReady(t: TestCase): void {
    this.#watchdog.testStarted(t.module.relativeModuleId, t.fullName, Date.now());
  }

  onTestCaseResult(t: TestCase): void {
    this.#watchdog.testEnded(t.module.relativeModuleId, t.fullName, Date.now());
  }

  onTestModuleEnd(m: TestModule): void {
    this.#watchdog.fileEnded(m.relativeModuleId);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    const { passed, failed } = count(testModules);
    process.stdout.write(`\n${passed} passed, ${failed + unhandledErrors.length} failed\n`);
  }

  async #check(): Promise<void> {
    // A file vitest holds as finished is not in flight, whatever events came late for it.
    const finished = new Set(
      [...this.#modules]
        .filter((m) => !['queued', 'pending'].includes(m.state()))
        .map((m) => m.relativeModuleId),
    );
    for (const file of finished) this.#watchdog.fileEnded(file);
    const stalls = this.#watchdog.stalled(Date.now());
    if (stalls.length === 0) return;
    if (this.#timer !== null) clearInterval(this.#timer);
    for (const s of stalls) {
      const mod = [...this.#modules].find((m) => m.relativeModuleId === s.file);
      const notEnded = mod ? [...mod.children.allTests()].filter((t) => t.result().state === 'pending') : [];
      process.stdout.write(
        `\n${describeStall(
          s,
          notEnded.map((t) => t.fullName),
        )}\n`,
      );
    }
    const { passed, failed } = count([...this.#modules]);
    process.stdout.write(`\n${passed} passed, ${failed + stalls.length} failed\n`);
    // The blocked worker, and whatever its tests started, would outlive this process.
    try {
      for (const pid of descendants(await listProcesses(), process.pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    } finally {
      process.exit(1);
    }
  }
}

function count(testModules: Iterable<TestModule>): { passed: number; failed: number } {
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
  return { passed, failed };
}
