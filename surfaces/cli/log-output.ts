import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';

/**
 * Where the runtime's log lines go from the CLI: JSON lines on stderr by default; readable,
 * colored lines when stderr is a terminal (no color with `NO_COLOR`). `SNOTRA_LOG_FORMAT=json`
 * or `pretty` forces one. Lines are redacted before they reach either form. The formatter
 * (pino-pretty, a quarter of a second of `snotra start` when imported up front) loads only when
 * readable lines are wanted.
 */
export function logOutput(
  stream: { isTTY?: boolean } = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.WritableStream | undefined {
  const format = env.SNOTRA_LOG_FORMAT;
  if (format === 'json' || (format !== 'pretty' && stream.isTTY !== true)) return undefined;
  const color = stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return pretty({ destination: 2, sync: true, colorize: color, ignore: 'hostname' });
}
