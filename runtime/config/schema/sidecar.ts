import { z } from 'zod';

/** The `sidecar` section: the local HTTP/WebSocket API (loopback only), its origins and limits. */
export const SidecarSection = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('false: `snotra start` runs no sidecar (the ready line says "sidecar": null).'),
    port: z
      .int()
      .min(0)
      .max(65535)
      .default(0)
      .describe('The loopback port of the sidecar API (default 0: any free port).'),
    allowedOrigins: z
      .array(z.string())
      .default([])
      .describe(
        'Browser origins allowed to call the sidecar, e.g. ["http://localhost:5173"] (default: none).',
      ),
    limits: z
      .strictObject({
        bodyBytes: z.int().positive().optional().describe('Largest HTTP request body, in bytes.'),
        frameBytes: z.int().positive().optional().describe('Largest WebSocket frame, in bytes.'),
        connections: z.int().positive().optional().describe('Most open connections at once.'),
        requestsPerMinute: z.int().positive().optional().describe('Most requests per minute.'),
      })
      .optional()
      .describe('Size and rate limits of the sidecar (defaults are built in).'),
  })
  .default({ enabled: true, port: 0, allowedOrigins: [] })
  .describe('The local HTTP/WebSocket API for apps embedding the runtime.');
