import { Writable } from 'node:stream';
import type { CliIo } from '../io.ts';
import { oneLine } from './escape.ts';

/** Log messages of a run's end: the feed already says how the followed run ended, and why. */
const RUN_END_MESSAGES = new Set(['run denied', 'run failed']);

/**
 * The runtime's log (redacted JSON lines) on stderr, warnings and errors only: the run's own
 * output is the feed, so a run's end is not said twice. When `readable` (a terminal, no
 * `--json`), a warning is one line for a person (`WHO: warning: MESSAGE (key=value …)`); else it
 * stays the JSON line.
 */
export function warningsTo(io: CliIo, readable: boolean, who: string): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) {
        if (line.length === 0) continue;
        let entry: Record<string, unknown> | null = null;
        try {
          const parsed = JSON.parse(line) as unknown;
          if (typeof parsed === 'object' && parsed !== null) entry = parsed as Record<string, unknown>;
        } catch {
          // Not JSON: shown as it is.
        }
        if (entry === null) {
          io.stderr(`${line}\n`);
          continue;
        }
        const level = Number(entry.level ?? 50);
        if (level < 40 || RUN_END_MESSAGES.has(String(entry.msg))) continue;
        io.stderr(readable ? `${readableWarning(entry, level, who)}\n` : `${line}\n`);
      }
      cb();
    },
  });
}

/** A log entry as one line for a person: its message, then its fields (no time, pid or level number). */
export function readableWarning(entry: Record<string, unknown>, level: number, who: string): string {
  const fields = Object.entries(entry)
    .filter(([k]) => !['level', 'time', 'pid', 'hostname', 'msg', 'v'].includes(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const what = level >= 50 ? 'error' : 'warning';
  return oneLine(
    `${who}: ${what}: ${String(entry.msg ?? '')}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}`,
    2000,
  );
}

/** Whether log lines should be readable lines: stderr is a terminal, no `--json`, no `SNOTRA_LOG_FORMAT=json`. */
export function readableLogs(json: boolean): boolean {
  return process.stderr.isTTY === true && !json && process.env.SNOTRA_LOG_FORMAT !== 'json';
}
