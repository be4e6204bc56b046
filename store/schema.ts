import { z } from 'zod';
import { RecordErrorCode, RecordRejectedError } from './errors.ts';
import type { StringScrubber } from './errors.ts';
import { int, str } from './fast-parse.ts';
import type { FastParser } from './fast-parse.ts';

/** The longest identifier, free text and timestamp a record may hold. */
const ID_MAX = 256;
const TEXT_MAX = 8192;
const TIMESTAMP_MAX = 8_640_000_000_000_000;

/** An identifier: run, session, agent, call, approval, task, user… (1–256 characters). */
export const Id = z.string().min(1).max(ID_MAX);

/** An identifier that may be absent. */
export const OptionalId = Id.nullable().optional();

/** A timestamp as data: integer milliseconds since the Unix epoch. */
export const Timestamp = z.int().min(0).max(TIMESTAMP_MAX);

/** Free text stored in a column (a resolved resource, a target): at most 8 KiB. */
export const Text = z.string().max(TEXT_MAX);

/** The same rules for the fast parsers of the hot path (fast-parse.ts). */
export const FAST = {
  id: str(1, ID_MAX),
  text: str(0, TEXT_MAX),
  timestamp: int(0, TIMESTAMP_MAX),
} as const;

/**
 * Validates `input` with `schema` (first with its `fast` parser when given: see fast-parse.ts),
 * or throws `invalid_input` naming the operation and every bad field (path and problem); the
 * message is scrubbed of registered secrets.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where: string,
  scrubber: StringScrubber,
): z.output<S>;
export function parseInput<S extends z.ZodType, T>(
  schema: S,
  input: unknown,
  where: string,
  scrubber: StringScrubber,
  fast: FastParser<z.output<S>, T>,
): T;
export function parseInput<S extends z.ZodType, T>(
  schema: S,
  input: unknown,
  where: string,
  scrubber: StringScrubber,
  fast?: FastParser<z.output<S>, T>,
): z.output<S> | T {
  if (fast !== undefined) {
    const quick = fast.parse(input);
    if (quick !== undefined) return quick;
  }
  const result = schema.safeParse(input);
  if (result.success) return fast === undefined ? result.data : fast.normalize(result.data);
  const problems = z.prettifyError(result.error);
  throw new RecordRejectedError(
    RecordErrorCode.invalidInput,
    scrubber.redactString(`${where}: invalid input:\n${problems}`),
    { where, paths: result.error.issues.map((issue) => issue.path.join('.')) },
  );
}
