import { z } from 'zod';

/**
 * The `secrets` section: where secrets named in config are read (`os` keyring by default; `env`:
 * `SNOTRA_SECRET_<NAME>`).
 */
export const SecretsSection = z
  .strictObject({
    backend: z
      .enum(['os', 'env', 'memory'])
      .default('os')
      .describe(
        '"os" (the OS keyring, default), "env" (SNOTRA_SECRET_<NAME> variables) or "memory" (tests).',
      ),
  })
  .default({ backend: 'os' })
  .describe('Where secrets named in config are read.');
