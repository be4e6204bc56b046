import { z } from 'zod';
import { PathText, SecretRef } from './common.ts';

/** The `bus` section: the NATS server the actors talk over, and how connections authenticate. */
export const BusSection = z
  .strictObject({
    url: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(32)])
      .optional()
      .describe(
        'A NATS server to use, e.g. "nats://127.0.0.1:4222", or a list of the servers of one cluster (the client tries each until one answers, and learns the others from it) (default: the runtime starts its own).',
      ),
    serverPath: PathText.optional().describe(
      'The nats-server binary the runtime starts for its own bus when bus.url is not set, e.g. "/opt/nats/nats-server"; relative to the config file\'s folder (default: nats-server on PATH, then /usr/sbin, /usr/local/sbin, /usr/local/bin, /opt/homebrew/bin, /usr/bin).',
    ),
    credentials: SecretRef.optional().describe('Credentials of that server, as a secret reference.'),
    auth: z
      .enum(['token', 'per-actor'])
      .optional()
      .describe(
        'How connections authenticate: "token" (default; the embedded server\'s per-launch token, or bus.credentials) or "per-actor" (each agent actor gets its own NATS JWT whose permissions are only its own subjects; approval decisions only from the gateway).',
      ),
    signingKey: SecretRef.optional().describe(
      'With bus.url and bus.auth "per-actor": the account signing key (an nkey seed, "SA…") the runtime mints credentials with, as a secret reference.',
    ),
    account: z
      .string()
      .regex(/^A[A-Z2-7]{55}$/, 'an account public nkey ("A" and 55 base32 characters)')
      .optional()
      .describe(
        'With bus.url and bus.auth "per-actor": the public key of the account the signing key belongs to.',
      ),
  })
  .default({})
  .describe('The NATS message bus the actors talk over.');
