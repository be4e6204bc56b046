import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { resolveNatsBinary } from '../bus/nats-binary.ts';
import { resolveConfig, type LoadedConfig } from '../config/load.ts';
import { openKeyringStore } from '../secrets/keyring.ts';
import { LOCK_OWNER_FILE } from '../state-lock.ts';
import { BWRAP_INSTALL_HINT, detectSandbox } from '../sandbox/detect.ts';
import { modelChecks, type ModelCheckOptions } from './model-checks.ts';
import { openStore, Redactor, SCHEMA_VERSION } from '../../store/index.ts';

import type { DoctorCheck } from './check.ts';

export type { DoctorCheck } from './check.ts';

const ok = (name: string, detail: string): DoctorCheck => ({ name, status: 'ok', detail });

function onPath(names: readonly string[], extra: readonly string[] = []): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter((d) => isAbsolute(d)), ...extra];
  for (const d of dirs) {
    for (const n of names) {
      const p = join(d, n);
      try {
        if (statSync(p).isFile()) {
          accessSync(p, constants.X_OK);
          return p;
        }
      } catch {
        // Not here.
      }
    }
  }
  return null;
}

function nodeCheck(): DoctorCheck {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const fine = (major === 20 && minor >= 11) || major >= 22;
  return fine
    ? ok('node', `Node ${process.versions.node}`)
    : {
        name: 'node',
        status: 'fail',
        detail: `Node ${process.versions.node}`,
        fix: 'install Node 20.11 or later (20.x or 22+)',
      };
}

function natsCheck(binary: string | undefined): DoctorCheck {
  try {
    return ok('nats-server', resolveNatsBinary(binary));
  } catch {
    return {
      name: 'nats-server',
      status: 'fail',
      detail: 'not found on PATH or in /usr/sbin, /usr/local/bin, /opt/homebrew/bin',
      fix: 'sudo apt-get install -y nats-server   (macOS: brew install nats-server), or set bus.serverPath in the config',
    };
  }
}

function sandboxCheck(): DoctorCheck {
  const sandbox = detectSandbox();
  return sandbox.name === 'bubblewrap'
    ? ok('sandbox', `bubblewrap (${sandbox.program})`)
    : {
        name: 'sandbox',
        status: 'warn',
        detail: `${sandbox.reason}; shell commands are not confined, so allow-mode shell calls need a human`,
        fix:
          process.platform === 'linux'
            ? BWRAP_INSTALL_HINT
            : 'use Linux with bubblewrap for confined shell calls',
      };
}

function chromiumCheck(): DoctorCheck {
  const found = onPath(['chromium', 'chromium-browser', 'google-chrome'], ['/usr/bin']);
  return found !== null
    ? ok('chromium', found)
    : {
        name: 'chromium',
        status: 'warn',
        detail: 'not found (needed by `snotra app` and the browser tests)',
        fix: 'sudo apt-get install -y chromium',
      };
}

async function secretsCheck(): Promise<DoctorCheck> {
  try {
    await openKeyringStore();
    return ok('secret store', 'the OS keyring is usable (secrets.backend "os")');
  } catch (err) {
    return {
      name: 'secret store',
      status: 'warn',
      detail: `the OS keyring is not usable here (${(err as Error).message.split('\n')[0]})`,
      fix: 'run a Secret Service (e.g. gnome-keyring) or set secrets.backend to "env" and pass SNOTRA_SECRET_<NAME> variables',
    };
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function stateChecks(loaded: LoadedConfig): DoctorCheck[] {
  const dir = loaded.config.stateDir;
  if (!existsSync(dir)) return [ok('state dir', `${dir} (not created yet; the first start creates it)`)];
  const checks: DoctorCheck[] = [];
  const mode = statSync(dir).mode & 0o777;
  checks.push(
    mode & 0o077
      ? {
          name: 'state dir',
          status: 'warn',
          detail: `${dir} is mode ${mode.toString(8)}: others can read it`,
          fix: `chmod 700 ${dir}`,
        }
      : ok('state dir', dir),
  );
  let holder: number | null = null;
  try {
    holder = Number.parseInt(readFileSync(join(dir, LOCK_OWNER_FILE), 'utf8'), 10);
  } catch {
    holder = null;
  }
  checks.push(
    holder !== null && Number.isSafeInteger(holder) && alive(holder)
      ? ok('state dir lock', `held by a running runtime (pid ${holder})`)
      : ok('state dir lock', 'free'),
  );
  const db = join(dir, 'snotra.db');
  if (existsSync(db)) {
    try {
      const store = openStore({ path: db, redactor: new Redactor(), readonly: true, integrityCheck: true });
      const version = store.schemaVersion;
      store.close();
      checks.push(
        version < SCHEMA_VERSION
          ? ok('database', `${db}: schema ${version} (migrated to ${SCHEMA_VERSION} at the next start)`)
          : ok('database', `${db}: schema ${version}, integrity ok`),
      );
    } catch (err) {
      checks.push({
        name: 'database',
        status: 'fail',
        detail: (err as Error).message,
        fix: `move ${db} aside or restore it from a backup`,
      });
    }
  }
  return checks;
}

/** Every check `snotra doctor` runs, each with what to do when it is not ok. */
export async function runDoctor(
  configFile: string | undefined,
  cwd: string,
  options: { natsBinary?: string } & ModelCheckOptions = {},
): Promise<DoctorCheck[]> {
  const checks = [
    nodeCheck(),
    natsCheck(options.natsBinary),
    sandboxCheck(),
    chromiumCheck(),
    await secretsCheck(),
  ];
  let loaded: LoadedConfig | null = null;
  try {
    loaded = resolveConfig(configFile, cwd);
    checks.push(ok('config', loaded.file ?? '(embedded defaults)'));
  } catch (err) {
    checks.push({
      name: 'config',
      status: 'fail',
      detail: (err as Error).message,
      fix: 'correct the fields named above',
    });
  }
  if (loaded !== null) checks.push(...stateChecks(loaded), ...(await modelChecks(loaded, options)));
  return checks;
}
