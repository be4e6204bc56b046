/**
 * Is an OS sandbox usable here? Looked up once per process: on Linux, a `bwrap` that actually
 * starts a sandbox with the flags every command uses (user namespaces may be disabled by the
 * kernel or by AppArmor even where the program is installed).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { bwrapArgs } from './bwrap.ts';

/** The install hint shown wherever a missing bubblewrap is reported. */
export const BWRAP_INSTALL_HINT = 'apt-get install -y bubblewrap';

/** What the detector found: a usable sandbox, or none and why. */
export type SandboxStatus =
  | { readonly name: 'bubblewrap'; readonly program: string }
  | { readonly name: 'none'; readonly reason: string };

/** Options of `detectSandbox`; the defaults look at the real host. */
export interface DetectOptions {
  readonly platform?: NodeJS.Platform;
  /** Where `bwrap` may be, tried in order (default: /usr/bin, /usr/local/bin, /bin). */
  readonly candidates?: readonly string[];
  /** Starts a trivial sandbox; returns null when it worked, else what went wrong. */
  readonly probe?: (program: string) => string | null;
}

const DEFAULT_CANDIDATES = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];
const cache = new Map<string, SandboxStatus>();

function probeBwrap(program: string): string | null {
  const plan = { roots: [], readOnly: [], hidden: [], network: false, cwd: '/' };
  try {
    execFileSync(program, bwrapArgs(plan, ['/bin/true']), {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
      // At its timeout the probe is killed outright: a SIGTERM it did not act on would block this thread for good.
      killSignal: 'SIGKILL',
    });
    return null;
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '')
      .trim()
      .split('\n')[0];
    return stderr !== undefined && stderr.length > 0 ? stderr : (error as Error).message;
  }
}

/**
 * The sandbox to use. Linux: the first existing candidate whose probe succeeds is
 * `bubblewrap`; otherwise `none` with the reason (missing, with the install hint, or the probe's
 * error). Other platforms: `none` (macOS `sandbox-exec` is designed, not enabled). Results of the
 * default probe are cached per program for the life of the process.
 */
export function detectSandbox(options: DetectOptions = {}): SandboxStatus {
  const platform = options.platform ?? process.platform;
  if (platform === 'darwin') {
    return { name: 'none', reason: 'the macOS sandbox (sandbox-exec) is designed but not enabled yet' };
  }
  if (platform !== 'linux') return { name: 'none', reason: `no OS sandbox is supported on ${platform}` };
  const candidates = options.candidates ?? DEFAULT_CANDIDATES;
  const program = candidates.find((c) => existsSync(c));
  if (program === undefined) {
    return { name: 'none', reason: `bubblewrap (bwrap) is not installed; install it: ${BWRAP_INSTALL_HINT}` };
  }
  const probe = options.probe ?? probeBwrap;
  const key = options.probe === undefined ? program : null;
  const cached = key === null ? undefined : cache.get(key);
  if (cached !== undefined) return cached;
  const failure = probe(program);
  const status: SandboxStatus =
    failure === null
      ? { name: 'bubblewrap', program }
      : { name: 'none', reason: `bubblewrap at ${program} cannot start a sandbox here: ${failure}` };
  if (key !== null) cache.set(key, status);
  return status;
}
