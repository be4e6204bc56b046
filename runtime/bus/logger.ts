/**
 * The logger the bus writes to: structurally a subset of pino's `Logger`, so a pino instance (ideally
 * one with the runtime's redaction) can be passed as is. The bus only ever logs small structured facts
 * (reason, subject, size, codes) — never a message body, never the token.
 */
export interface BusLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that drops everything (the default when none is injected). */
export const silentLogger: BusLogger = Object.freeze({
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
});

/** The longest subject that is written to a log line; longer ones are cut (they may be peer-chosen). */
const MAX_LOGGED_SUBJECT = 200;

/** A subject shortened for logging. */
export function loggableSubject(subject: string): string {
  return subject.length > MAX_LOGGED_SUBJECT ? `${subject.slice(0, MAX_LOGGED_SUBJECT)}…` : subject;
}

/** A thrown value reduced to name, code and a short message, for a log line. */
export function loggableError(err: unknown): { name: string; code?: string; message: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return {
      name: err.name,
      ...(typeof code === 'string' ? { code } : {}),
      message: err.message.length > 300 ? `${err.message.slice(0, 300)}…` : err.message,
    };
  }
  return { name: typeof err, message: 'non-Error value thrown' };
}
