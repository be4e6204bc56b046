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

/** A reference to a secret by name; the value lives in the secret store, never in config. */
export const SecretRef = z
  .strictObject({
    secret: z
      .string()
      .min(1)
      .describe('The name of a secret in the secret store (see `secrets.backend`), e.g. "openai".'),
  })
  .describe('A reference to a secret by name: `{ "secret": "<name>" }`; the value never appears in config.');

/** A free-text note for people reading the config; ignored by the runtime. */
export const Comment = z
  .string()
  .optional()
  .describe('A note for people reading this file (JSON has no comments); ignored by the runtime.');
