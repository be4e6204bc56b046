import { z } from 'zod';
import { SecretRef } from './common.ts';

/**
 * The `telemetry` section (issue 39): OpenTelemetry traces and metrics over OTLP/HTTP. Optional
 * and without a default: with no `telemetry` key no telemetry module is loaded at all.
 */
export const TelemetrySection = z
  .strictObject({
    otlp: z
      .strictObject({
        endpoint: z
          .url({ protocol: /^https?$/, error: 'an http:// or https:// URL' })
          .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), {
            message: 'credentials in the URL are refused: put them in otlp.headers as a secret reference',
          })
          .describe(
            'The OTLP/HTTP base URL, e.g. "http://127.0.0.1:4318" (Jaeger, Tempo, a collector); /v1/traces and /v1/metrics are added.',
          ),
        headers: z
          .record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/), z.union([z.string(), SecretRef]))
          .optional()
          .describe(
            'Request headers by name; a value is a string or a secret reference, e.g. { "Authorization": { "env": "LANGFUSE_API_KEY" } }.',
          ),
      })
      .describe('Where traces and metrics are sent.'),
    sampleRatio: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe('The share of runs traced, 0 to 1 (default 1); a sub-agent follows its parent.'),
    captureContent: z
      .boolean()
      .optional()
      .describe(
        'Also export tool arguments, tool results and model text, each through the redactor first (default false: none of them).',
      ),
  })
  .optional()
  .describe('OpenTelemetry export (opt-in): traces per the GenAI semantic conventions, and metrics.');

/** The `telemetry` section as configured (undefined: telemetry off). */
export type TelemetryConfig = z.infer<typeof TelemetrySection>;
