import { describe, expect, it } from 'vitest';
import {
  createSecretResolver,
  EnvSecretStore,
  MemorySecretStore,
  openKeyringStore,
  openSecretStore,
  secretEnvName,
  type KeyringEntry,
} from '../../runtime/secrets/index.ts';
import { Redactor } from '../../store/redaction/redactor.ts';

describe('MemorySecretStore', () => {
  it('gets, sets and deletes by name, validating names', async () => {
    const store = new MemorySecretStore({ a: '1' });
    expect(await store.get('a')).toBe('1');
    await store.set('b', '2');
    expect(await store.delete('b')).toBe(true);
    expect(await store.get('b')).toBeNull();
    await expect(store.get('../x')).rejects.toMatchObject({ code: 'invalid_secret_name' });
  });
});

describe('EnvSecretStore', () => {
  it('reads SNOTRA_SECRET_* once and deletes them from the environment', async () => {
    const env: Record<string, string | undefined> = {
      SNOTRA_SECRET_GITHUB_TOKEN: 'ghp_value',
      SNOTRA_SECRET_DB_PASSWORD: 'pw',
      OTHER: 'x',
    };
    const store = new EnvSecretStore(env);
    expect(env).toEqual({ OTHER: 'x' });
    expect(store.size).toBe(2);
    expect(await store.get('github-token')).toBe('ghp_value');
    expect(await store.get('db.password')).toBe('pw');
    expect(await store.get('missing')).toBeNull();
    expect(secretEnvName('github-token')).toBe('SNOTRA_SECRET_GITHUB_TOKEN');
    await expect(store.set('x', 'y')).rejects.toMatchObject({ code: 'secret_store_read_only' });
  });

  it('is only used when configured explicitly', async () => {
    const env = { SNOTRA_SECRET_A: 'v' };
    const store = await openSecretStore({ backend: 'env', env });
    expect(store.kind).toBe('env');
    expect(await store.get('a')).toBe('v');
  });
});

describe('OS secret store', () => {
  it('fails with a clear secret_store_unavailable when the platform store is missing, no fallback', async () => {
    const error = (await openSecretStore({
      keyring: { service: 'snotra-test', env: {} },
    }).catch((e: unknown) => e)) as { code?: string; message?: string } | { kind: string };
    if ('kind' in error) {
      // A real OS store is reachable here: it must be the OS backend, never a plain-text one.
      expect(error.kind).toBe('os');
      return;
    }
    expect(error.code).toBe('secret_store_unavailable');
    if (process.platform === 'linux') expect(error.message).toMatch(/D-Bus|Secret Service/);
  });

  it('names what is missing and never falls back, with a refusing platform', async () => {
    const refusing = (): KeyringEntry => ({
      getPassword: () => Promise.resolve(null),
      setPassword: () =>
        Promise.reject(new Error("Couldn't access platform storage: AccessDenied\n\nstack…")),
      deleteCredential: () => Promise.resolve(false),
    });
    const error = await openKeyringStore({ factory: refusing, platform: 'linux', env: {} }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'secret_store_unavailable' });
    expect((error as Error).message).toContain('DBUS_SESSION_BUS_ADDRESS is not set');
    expect((error as Error).message).not.toContain('stack');
  });

  it('works over a working platform store (fake keyring)', async () => {
    const data = new Map<string, string>();
    const factory = (service: string, account: string): KeyringEntry => ({
      getPassword: async () => data.get(`${service}/${account}`) ?? null,
      setPassword: async (p) => void data.set(`${service}/${account}`, p),
      deleteCredential: async () => data.delete(`${service}/${account}`),
    });
    const store = await openKeyringStore({ factory });
    expect(data.size).toBe(0);
    await store.set('gh', 'v');
    expect(await store.get('gh')).toBe('v');
    expect(await store.delete('gh')).toBe(true);
    expect(await store.get('gh')).toBeNull();
  });
});

describe('createSecretResolver', () => {
  it('registers the value with the redactor before returning it', async () => {
    const redactor = new Redactor();
    const resolver = createSecretResolver(new MemorySecretStore({ gh: 'ghp_secretvalue123' }), redactor);
    expect(redactor.redactString('x ghp_secretvalue123 y')).toContain('ghp_secretvalue123');
    expect(await resolver.resolve('gh')).toBe('ghp_secretvalue123');
    expect(redactor.redactString('x ghp_secretvalue123 y')).toBe('x [REDACTED] y');
  });

  it('refuses names outside the allowed set and reports missing secrets by name only', async () => {
    const resolver = createSecretResolver(new MemorySecretStore({ a: 'value-a' }), new Redactor(), {
      allowed: ['a', 'b'],
    });
    await expect(resolver.resolve('c')).rejects.toMatchObject({ code: 'secret_not_allowed' });
    await expect(resolver.resolve('b')).rejects.toMatchObject({ code: 'secret_not_found' });
    expect(await resolver.resolve('a')).toBe('value-a');
  });
});
