import type { ProcStat } from '../../runtime/processes/index.ts';

/** A test file that made no progress for longer than the limit, and the tests it was running. */
export interface Stall {
  readonly file: string;
  readonly quietMs: number;
  readonly running: readonly string[];
}

interface InFlight {
  last: number;
  readonly running: Set<string>;
}

/**
 * Which test files stopped making progress. A test that hangs on an `await` is ended by its own
 * timeout, inside its worker; a worker whose event loop is blocked (a `spawnSync` whose child
 * ignores SIGTERM, a synchronous loop) can end nothing, and the whole run then waits for it
 * forever. This notices it: a file in flight with no test started or ended for `limitMs`.
 */
export class StallWatchdog {
  readonly #files = new Map<string, InFlight>();
  /**
   * Files that ended. Vitest reports a worker's task updates as they come, one handler per
   * message, each awaiting the reporters event by event: two messages read at once interleave,
   * so a test event of an earlier message can reach a reporter after its file's end from a later
   * one. A file is in flight only between its start and its end; such a late event is ignored.
   */
  readonly #ended = new Set<string>();

  constructor(readonly limitMs: number) {
    if (!Number.isFinite(limitMs) || limitMs <= 0)
      throw new Error(`stall limit must be a positive number of ms, got ${limitMs}`);
  }

  fileStarted(file: string, now: number): void {
    this.#ended.delete(file);
    this.#files.set(file, { last: now, running: new Set() });
  }

  testStarted(file: string, test: string, now: number): void {
    this.#touch(file, now)?.running.add(test);
  }

  testEnded(file: string, test: string, now: number): void {
    this.#touch(file, now)?.running.delete(test);
  }

  fileEnded(file: string): void {
    this.#files.delete(file);
    this.#ended.add(file);
  }

  stalled(now: number): Stall[] {
    const out: Stall[] = [];
    for (const [file, f] of this.#files)
      if (now - f.last > this.limitMs) out.push({ file, quietMs: now - f.last, running: [...f.running] });
    return out;
  }

  /** The file's entry, made if a test event comes before its start; none once it ended. */
  #touch(file: string, now: number): InFlight | undefined {
    if (this.#ended.has(file)) return undefined;
    let f = this.#files.get(file);
    if (f === undefined) {
      f = { last: now, running: new Set() };
      this.#files.set(file, f);
    }
    f.last = now;
    return f;
  }
}

/** The pids of every live descendant of `root` in `all` (children before their own children). */
export function descendants(all: readonly ProcStat[], root: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const p of all) {
    if (p.state === 'Z' || p.state === 'X') continue;
    const list = byParent.get(p.ppid) ?? [];
    list.push(p.pid);
    byParent.set(p.ppid, list);
  }
  const out: number[] = [];
  const seen = new Set<number>([root]);
  const queue = [root];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift() as number) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/**
 * One line per stalled file, naming the tests it was running, or else (the worker blocked before
 * it reported their start) the first of its tests that have not ended, `notEnded`.
 */
export function describeStall(s: Stall, notEnded: readonly string[] = []): string {
  const quote = (names: readonly string[]) => names.map((t) => JSON.stringify(t)).join(', ');
  const which =
    s.running.length > 0
      ? `; still running: ${quote(s.running)}`
      : notEnded.length > 0
        ? `; not ended: ${quote(notEnded.slice(0, 3))}${notEnded.length > 3 ? ` and ${notEnded.length - 3} more` : ''}`
        : '';
  return (
    `${s.file}: no test started or ended for ${Math.round(s.quietMs / 1000)} s${which}. ` +
    'Its worker is blocked (a synchronous wait, such as spawnSync on a child that ignores SIGTERM, ' +
    'which no test timeout can end): the run stops here.'
  );
}
