/**
 * Secret references that name a variable people already export (`{ "env": "OPENAI_API_KEY" }`),
 * and missing-secret errors that name the exact variable or keyring entry to set.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../runtime/config/load.ts';
import {
  createSecretResolver,
  EnvSecretStore,
  MemorySecretStore,
  registerKnownSecrets,
  secretEnvName,
  type SecretStore,
} from '../../runtime/secrets/index.ts';
import { Redactor } from '../../store/redaction/redactor.ts';
import { runs } from '../support/laws.ts';

const KEY = 'sk-live-0123456789abcdef';

/** A store that looks like the OS keyring to messages (kind `os`), in memory. */
function keyringLike(values: Record<string, string> = {}): SecretStore {
  const inner = new MemorySecretStore(values);
  return {
    kind: 'os',
    get: (n) => inner.get(n),
    set: (n, v) => inner.set(n, v),
    delete: (n) => inner.delete(n),
  };
}

function modelConfig(apiKey: unknown): string {
  return JSON.stringify({
    agents: {
      a: { model: { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey } },
    },
  });
}

async function failure(p: Promise<unknown>): Promise<Error & { code?: string }> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as Error & { code?: string },
  );
}

describe('{ "env": VARIABLE } references', () => {
  it('resolve from the environment, with or without a secret store, and are registered with the redactor', async () => {
    for (const store of [undefined, new MemorySecretStore()]) {
      const redactor = new Redactor();
      const resolver = createSecretResolver(store, redactor, { env: { OPENAI_API_KEY: KEY } });
      expect(await resolver.resolve({ env: 'OPENAI_API_KEY' })).toBe(KEY);
      expect(redactor.redactString(`key ${KEY}`)).not.toContain(KEY);
    }
  });

  it('an unset or empty variable fails naming it; an inherited name (__proto__, toString) is not a value', async () => {
    const resolver = createSecretResolver(undefined, new Redactor(), { env: { EMPTY: '' } });
    for (const env of ['OPENAI_API_KEY', 'EMPTY', '__proto__', 'toString', 'constructor']) {
      const err = await failure(resolver.resolve({ env }));
      expect(err.code).toBe('secret_not_found');
      expect(err.message).toBe(
        `environment variable ${env} is not set: export ${env} in the environment snotra starts in`,
      );
    }
  });

  it('config accepts { "env" } wherever a secret reference goes, and refuses look-alikes with the field named', () => {
    const loaded = parseConfig(modelConfig({ env: 'OPENAI_API_KEY' }), join(tmpdir(), 'c.json'), tmpdir());
    expect(loaded.config.agents.a?.model).toMatchObject({ apiKey: { env: 'OPENAI_API_KEY' } });
    const refused: [unknown, RegExp][] = [
      // The runtime's own variables, in any case: taken from the environment at start.
      [{ env: 'SNOTRA_SIDECAR_TOKEN' }, /SNOTRA_\* variables are the runtime's own/],
      [{ env: 'snotra_nats_token' }, /SNOTRA_\* variables are the runtime's own/],
      [{ env: 'SNOTRA_SECRET_OPENAI' }, /write \{ "secret": "<name>" \}/],
      [{ env: 'OPENAI-KEY' }, /an environment variable name/],
      // Credentials of the shell that are not a model's API key: a repository's config must not reach them.
      [{ env: 'AWS_SECRET_ACCESS_KEY' }, /only a variable named like an API key/],
      [{ env: 'GITHUB_TOKEN' }, /only a variable named like an API key/],
      [{ env: 'HOME' }, /only a variable named like an API key/],
      [{ env: 'OPENAI_API_KEY_BACKUP' }, /only a variable named like an API key/],
      [{ env: 'openai_api_key' }, /only a variable named like an API key/],
      [{ env: '' }, /an environment variable name/],
      [{ env: 'A_API_KEY', secret: 'b' }, /expected exactly one key: a secret reference/],
      [{ env: 5 }, /apiKey/],
      ['sk-literal-key', /apiKey: expected object, got a string/],
      [{}, /expected exactly one key/],
    ];
    for (const [apiKey, message] of refused) {
      let error: Error | null = null;
      try {
        parseConfig(modelConfig(apiKey), join(tmpdir(), 'c.json'), tmpdir());
      } catch (e) {
        error = e as Error;
      }
      expect(error?.message, JSON.stringify(apiKey)).toMatch(/agents\.a\.model\.apiKey/);
      expect(error?.message, JSON.stringify(apiKey)).toMatch(message);
      expect(error?.message).not.toContain('sk-literal-key');
    }
  });

  it('values of referenced variables are registered at boot, before any use; unreferenced ones are not', async () => {
    const redactor = new Redactor();
    const config = { agents: { a: { model: { apiKey: { env: 'MY_KEY' } } } }, other: { env: 'X', y: 1 } };
    await registerKnownSecrets(config, undefined, redactor, {
      MY_KEY: KEY,
      X: 'not-a-reference-value',
      HOME: '/h',
    });
    expect(redactor.redactString(`a ${KEY} b`)).not.toContain(KEY);
    expect(redactor.redactString('not-a-reference-value')).toBe('not-a-reference-value');
  });
});

describe('missing-secret errors name what to set', () => {
  it('env backend: the exact SNOTRA_SECRET_ variable', async () => {
    const resolver = createSecretResolver(new EnvSecretStore({}), new Redactor());
    const err = await failure(resolver.resolve({ secret: 'openai-key' }));
    expect(err.code).toBe('secret_not_found');
    expect(err.message).toContain('secret "openai-key" is not set in the env secret store');
    expect(err.message).toContain('set SNOTRA_SECRET_OPENAI_KEY in the environment');
  });

  it('OS keyring: the service and account of the entry; no store: how to configure one', async () => {
    const os = await failure(createSecretResolver(keyringLike(), new Redactor()).resolve('openai-key'));
    expect(os.message).toContain('service "snotra-runtime", account "openai-key"');
    const none = await failure(createSecretResolver(undefined, new Redactor()).resolve('openai-key'));
    expect(none.code).toBe('secret_store_unavailable');
    expect(none.message).toContain('set secrets.backend');
    expect(none.message).toContain('{ "env": "VARIABLE" }');
  });

  it('law: a missing secret names its variable, and no error carries any value the stores hold', async () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/);
    await fc.assert(
      fc.asyncProperty(name, fc.string({ minLength: 8, maxLength: 30 }), async (missing, value) => {
        const held = `held-${value}`;
        const env = { [secretEnvName(`other-${missing}`)]: held, OPENAI_API_KEY: held };
        const store = new EnvSecretStore(env);
        const resolver = createSecretResolver(store, new Redactor(), { env: { OPENAI_API_KEY: held } });
        const err = await failure(resolver.resolve(missing));
        expect(err.message).toContain(secretEnvName(missing));
        expect(err.message).not.toContain(held);
        const unset = await failure(resolver.resolve({ env: 'UNSET_VARIABLE' }));
        expect(unset.message).not.toContain(held);
      }),
      { numRuns: runs(100) },
    );
  });
});
