import { z } from 'zod';
import { PathRuleInput } from '../../../policy/paths/index.ts';

/** One extra sensitive-path rule: a policy path rule with its kind. */
const SensitiveEntry = PathRuleInput.extend({
  kind: z
    .enum(['sensitive', 'never-writable'])
    .describe(
      '"sensitive" (every read and write is denied, and the sandbox hides the path) or "never-writable" (may be read, never written).',
    ),
});

/**
 * The `sensitivePaths` section: extra sensitive or never-writable paths; config can only make the
 * built-in list stricter.
 */
export const SensitivePathsSection = z
  .array(SensitiveEntry.describe('One extra sensitive-path rule.'))
  .default([])
  .describe(
    'Extra sensitive or never-writable paths; config can only add to the built-in list, never remove.',
  );
