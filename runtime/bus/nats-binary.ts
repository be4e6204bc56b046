import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { NatsServerMissingError } from './errors.ts';

/**
 * Folders searched after `PATH`: Debian installs `nats-server` in /usr/sbin, which is not on a normal
 * user's PATH; Homebrew uses /opt/homebrew/bin (Apple silicon) or /usr/local/bin.
 */
const FALLBACK_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/local/bin', '/opt/homebrew/bin', '/usr/bin'];

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of the `nats-server` binary to run. `binary` may be a path (absolute or relative
 * to the working directory) or a bare name searched on `PATH` and then in the usual install folders.
 * Throws {@link NatsServerMissingError} (code `nats_server_missing`, with the install hint) when no
 * executable file is found.
 */
export function resolveNatsBinary(binary = 'nats-server', pathEnv = process.env.PATH ?? ''): string {
  if (binary.includes('/')) {
    const p = isAbsolute(binary) ? binary : resolve(binary);
    if (isExecutableFile(p)) return p;
    throw new NatsServerMissingError([p]);
  }
  const dirs = [...new Set([...pathEnv.split(delimiter).filter((d) => isAbsolute(d)), ...FALLBACK_DIRS])];
  for (const d of dirs) {
    const p = join(d, binary);
    if (isExecutableFile(p)) return p;
  }
  throw new NatsServerMissingError(dirs.map((d) => join(d, binary)));
}
