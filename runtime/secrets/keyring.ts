/**
 * The OS-protected secret store: macOS Keychain, Windows Credential Manager, and on Linux the
 * Secret Service (GNOME Keyring, KWallet) or the kernel keyring, through `@napi-rs/keyring`.
 * Where none is reachable, opening it fails with `secret_store_unavailable` — never a silent
 * fallback to plain text.
 */
import { SecretStoreError, SecretStoreErrorCode, assertSecretName, type SecretStore } from './store.ts';

/** The keyring service name entries are stored under by default. */
export const DEFAULT_KEYRING_SERVICE = 'snotra-runtime';

/** The part of `@napi-rs/keyring`'s `AsyncEntry` this store uses. */
export interface KeyringEntry {
  getPassword(): Promise<string | null | undefined>;
  setPassword(password: string): Promise<void>;
  deleteCredential(): Promise<boolean>;
}

/** Creates an entry for (service, account). */
export type KeyringEntryFactory = (service: string, account: string) => KeyringEntry;

const PROBE_ACCOUNT = '__snotra_probe__';

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n')[0] ?? '').slice(0, 200);
}

/** What a Linux user is missing when the platform store refuses, named for the error message. */
function whatIsMissing(platform: NodeJS.Platform, env: Readonly<Record<string, string | undefined>>): string {
  if (platform === 'linux') {
    const bus =
      env.DBUS_SESSION_BUS_ADDRESS === undefined
        ? 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)'
        : 'the D-Bus session bus has no Secret Service provider';
    return `${bus}; start a Secret Service (e.g. gnome-keyring-daemon) in a D-Bus session, or configure secrets.backend "env" explicitly`;
  }
  if (platform === 'darwin') return 'the login Keychain is not accessible';
  if (platform === 'win32') return 'the Windows Credential Manager is not accessible';
  return `no supported OS secret store on ${platform}`;
}

async function loadFactory(): Promise<KeyringEntryFactory> {
  try {
    const mod = (await import('@napi-rs/keyring')) as unknown as {
      AsyncEntry: new (service: string, account: string) => KeyringEntry;
    };
    return (service, account) => new mod.AsyncEntry(service, account);
  } catch (error) {
    throw new SecretStoreError(
      SecretStoreErrorCode.unavailable,
      'the OS secret store backend (@napi-rs/keyring) is not installed for this platform',
      { cause: error },
    );
  }
}

/** Options of `openKeyringStore`. */
export interface KeyringStoreOptions {
  readonly service?: string;
  /** Entry factory; defaults to `@napi-rs/keyring`'s `AsyncEntry`. */
  readonly factory?: KeyringEntryFactory;
  readonly platform?: NodeJS.Platform;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Opens the OS store and proves it works by writing, reading back and deleting a probe entry.
 * Throws `SecretStoreError` `secret_store_unavailable` naming what is missing (e.g. "no D-Bus
 * session bus") when the platform store cannot be used.
 */
export async function openKeyringStore(options: KeyringStoreOptions = {}): Promise<SecretStore> {
  const service = options.service ?? DEFAULT_KEYRING_SERVICE;
  const factory = options.factory ?? (await loadFactory());
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  try {
    const probe = factory(service, PROBE_ACCOUNT);
    const token = `probe-${process.pid}-${Date.now()}`;
    await probe.setPassword(token);
    const back = await probe.getPassword();
    await probe.deleteCredential();
    if (back !== token) throw new Error('the probe entry did not read back');
  } catch (error) {
    throw new SecretStoreError(
      SecretStoreErrorCode.unavailable,
      `no OS secret store is available: ${whatIsMissing(platform, env)} (platform said: ${firstLine(error)})`,
    );
  }
  return new KeyringSecretStore(service, factory);
}

/** A `SecretStore` over the OS keyring; create it with `openKeyringStore`. */
export class KeyringSecretStore implements SecretStore {
  readonly kind = 'os';

  constructor(
    private readonly service: string,
    private readonly factory: KeyringEntryFactory,
  ) {}

  private entry(name: string): KeyringEntry {
    assertSecretName(name);
    return this.factory(this.service, name);
  }

  private failed(what: string, name: string, error: unknown): SecretStoreError {
    return new SecretStoreError(
      SecretStoreErrorCode.failed,
      `the OS secret store could not ${what} "${name}": ${firstLine(error)}`,
    );
  }

  /** See `SecretStore.get`. */
  async get(name: string): Promise<string | null> {
    const entry = this.entry(name);
    try {
      return (await entry.getPassword()) ?? null;
    } catch (error) {
      if (/no (matching )?entry/i.test(firstLine(error))) return null;
      throw this.failed('read', name, error);
    }
  }

  /** See `SecretStore.set`. */
  async set(name: string, value: string): Promise<void> {
    const entry = this.entry(name);
    try {
      await entry.setPassword(value);
    } catch (error) {
      throw this.failed('store', name, error);
    }
  }

  /** See `SecretStore.delete`. */
  async delete(name: string): Promise<boolean> {
    const entry = this.entry(name);
    try {
      return await entry.deleteCredential();
    } catch (error) {
      if (/no (matching )?entry/i.test(firstLine(error))) return false;
      throw this.failed('delete', name, error);
    }
  }
}
