/** Building blocks shared by the config sections: paths, secret references, comments. */
import { z } from 'zod';

function isControl(ch: string): boolean {
  const c = ch.codePointAt(0) ?? 0;
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029;
}

/** Whether a path holds NUL or another control character (C0, DEL, C1, line/paragraph separators). */
export function hasControlChars(path: string): boolean {
  return [...path].some(isControl);
}

/** A file system path: never empty, never with NUL or other control characters. */
export const PathText = z
  .string()
  .min(1)
  .refine((p) => !hasControlChars(p), {
    message: 'a path must not contain NUL or other control characters',
  });

const REFERENCE_SHAPE =
  'a secret reference, { "secret": "<name>" } (the secret store) or { "env": "<VARIABLE>" } (a variable you export), never the value itself';

/**
 * A secret named in config, never its value: `{ "secret": NAME }` (an entry of the secret store,
 * see `secrets.backend`) or `{ "env": VARIABLE }` (a variable of the environment snotra starts
 * in, e.g. a key people already export). Only names ending in `_API_KEY` are taken (a config
 * that came with a repository must not reach any other credential of the shell); the runtime's
 * own `SNOTRA_*` variables are refused: they are taken from the environment at start. One object with exactly one of the two keys,
 * so a bad field is reported at its own path.
 */
export const SecretRef = z
  .strictObject({
    secret: z
      .string()
      .min(1)
      .optional()
      .describe('The name of a secret in the secret store (see `secrets.backend`), e.g. "openai".'),
    env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name (letters, digits and "_")')
      .refine((name) => !name.toUpperCase().startsWith('SNOTRA_'), {
        message:
          'SNOTRA_* variables are the runtime\'s own; for SNOTRA_SECRET_<NAME> write { "secret": "<name>" } with secrets.backend "env"',
      })
      // A config may come with a repository: it names a key it is meant to have, never any
      // credential of the shell (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN) for a URL it chooses.
      .refine((name) => name.toUpperCase().startsWith('SNOTRA_') || /^[A-Z][A-Z0-9_]*_API_KEY$/.test(name), {
        message:
          'only a variable named like an API key (ending in _API_KEY, e.g. OPENAI_API_KEY) may be named here; for any other secret use { "secret": "<name>" }',
      })
      .optional()
      .describe('The name of a variable of the environment snotra starts in, e.g. "OPENAI_API_KEY".'),
  })
  .refine((ref) => (ref.secret === undefined) !== (ref.env === undefined), {
    message: `expected exactly one key: ${REFERENCE_SHAPE}`,
  })
  .describe(`A secret: ${REFERENCE_SHAPE}.`) as unknown as z.ZodType<{ secret: string } | { env: string }>;

/** A free-text note for people reading the config; ignored by the runtime. */
export const Comment = z
  .string()
  .optional()
  .describe('A note for people reading this file (JSON has no comments); ignored by the runtime.');
