import { z } from 'zod';
import { PathText, SecretRef } from './common.ts';

/** The model an agent talks to (`agents.<id>.model`): which API, where, and its request limits. */
export const Model = z.strictObject({
  provider: z
    .enum(['scripted', 'openai-compatible', 'anthropic'])
    .describe(
      'Which model API to use: "openai-compatible", "anthropic", or "scripted" (replays a file of steps; for tests and demos).',
    ),
  /** For `scripted`: a JSON file of steps, relative to the config's folder. */
  script: PathText.optional().describe(
    'For "scripted": a JSON file of steps, relative to this config file\'s folder.',
  ),
  /** The API root (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com/v1`). */
  baseUrl: z
    .string()
    .optional()
    .describe(
      'The API root, e.g. "https://api.openai.com/v1", "http://127.0.0.1:11434/v1" or "https://api.anthropic.com/v1".',
    ),
  model: z.string().min(1).optional().describe('The model name the API expects, e.g. "gpt-4o-mini".'),
  apiKey: SecretRef.optional().describe('The API key, as a secret reference: { "secret": "openai" }.'),
  /** Extra request headers; a value may be a secret reference. */
  headers: z
    .record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/), z.union([z.string(), SecretRef]))
    .optional()
    .describe('Extra request headers by name; a value is a string or a secret reference.'),
  /** Longest silence before the answer starts or between two streamed chunks, in ms. */
  timeoutMs: z
    .int()
    .positive()
    .max(3_600_000)
    .optional()
    .describe(
      'Longest silence before the answer starts or between two streamed chunks, in ms (at most one hour).',
    ),
  /** Retries before the first streamed byte (connection errors, 408, 409, 429, 5xx). */
  maxRetries: z
    .int()
    .min(0)
    .max(10)
    .optional()
    .describe('Retries before the first streamed byte (connection errors, 408, 409, 429, 5xx); 0 to 10.'),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .optional()
    .describe("Sampling temperature, 0 to 2 (default: the API's)."),
  /** Output token limit of one step (Anthropic requires one: default 4096). */
  maxTokens: z
    .int()
    .positive()
    .optional()
    .describe('Output token limit of one model step (for "anthropic" the default is 4096).'),
  /** What the model costs, in US dollars per million tokens: gives each call's and run's cost. */
  price: z
    .strictObject({
      inputPerMTok: z.number().min(0).max(100_000).describe('US dollars per million input (prompt) tokens.'),
      outputPerMTok: z.number().min(0).max(100_000).describe('US dollars per million output tokens.'),
    })
    .optional()
    .describe(
      'The price of the model in US dollars per million tokens ({ "inputPerMTok": 2.5, "outputPerMTok": 10 }): each model call\'s usage then carries its cost (costUsd).',
    ),
  /** The model's context window, in tokens: a step's history is fitted to it (README "Sessions"). */
  contextTokens: z
    .int()
    .min(256)
    .max(10_000_000)
    .optional()
    .describe(
      'The context window in tokens; older tool results are elided, then older exchanges left out, to fit it (default: 128000 for "openai-compatible", 200000 for "anthropic"; none for "scripted").',
    ),
});

/** The context window of a model without `contextTokens`, by provider (null: not fitted). */
export const DEFAULT_CONTEXT_TOKENS = {
  'openai-compatible': 128_000,
  anthropic: 200_000,
  scripted: null,
} as const;
