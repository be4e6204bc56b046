import { z } from 'zod';

/**
 * The `http` section: `http_request` limits. Private, loopback and link-local targets are refused;
 * `allowPrivateHosts` lists exact `host:port` pairs that may be reached anyway (a local service you
 * run yourself).
 */
export const HttpSection = z
  .strictObject({
    allowPrivateHosts: z
      .array(
        z
          .string()
          .regex(
            /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/,
            'a host:port pair such as "127.0.0.1:8080"',
          ),
      )
      .default([])
      .describe(
        'Exact host:port pairs on private, loopback or link-local addresses that may be reached anyway, e.g. ["127.0.0.1:8080"].',
      ),
  })
  .default({ allowPrivateHosts: [] })
  .describe('Limits of the http_request tool; private, loopback and link-local targets are refused.');
