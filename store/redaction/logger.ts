import { pino } from 'pino';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import type { Redactor } from './redactor.ts';

/** Options of `createLogger`: pino options minus the hooks the redactor owns. */
export type RedactedLoggerOptions = Omit<LoggerOptions, 'hooks' | 'redact' | 'browser'>;

/**
 * Creates a pino logger whose every output line passes through `redactor` just before it is
 * written: the serialized record (message, merged object, serialized errors, the bindings of
 * every child logger, base fields) is parsed, redacted by key and value, and re-serialized.
 * Redaction therefore happens in one place, whatever a call site logs, and secrets registered
 * after the logger was created are scrubbed too.
 */
export function createLogger(
  redactor: Redactor,
  destination: DestinationStream,
  options: RedactedLoggerOptions = {},
): Logger {
  return pino(
    {
      ...options,
      hooks: { streamWrite: (line: string) => redactLine(redactor, line) },
    },
    destination,
  );
}

/** Redacts one serialized pino line; a line that is not JSON is scrubbed as text. */
export function redactLine(redactor: Redactor, line: string): string {
  const newline = line.endsWith('\n') ? '\n' : '';
  const body = newline ? line.slice(0, -1) : line;
  let record: unknown;
  try {
    record = JSON.parse(body);
  } catch {
    return JSON.stringify({ msg: redactor.redactString(body) }) + newline;
  }
  return JSON.stringify(redactor.redact(record)) + newline;
}
