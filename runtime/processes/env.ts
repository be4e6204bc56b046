/**
 * The environment of a child process (DESIGN.md §10): only an explicit allowlist of the parent's
 * variables, plus configured variables that pass the name rules below. Nothing else of the
 * parent's environment ever reaches a child.
 */
import {
  ProcessRunError,
  ProcessRunErrorCode,
  type ChildEnvEntry,
} from '../../actors/tools/process-runner.ts';

/** Parent variables a POSIX child inherits (plus every `LC_*`). */
export const POSIX_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TMPDIR',
  'USER',
  'LOGNAME',
  'SHELL',
  'TZ',
];

/** Parent variables a Windows child inherits (names compared case-insensitively). */
export const WINDOWS_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'PATHEXT',
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'TEMP',
  'TMP',
  'USERPROFILE',
  'USERNAME',
  'USERDOMAIN',
  'HOMEDRIVE',
  'HOMEPATH',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'COMMONPROGRAMFILES',
  'NUMBER_OF_PROCESSORS',
  'PROCESSOR_ARCHITECTURE',
  'OS',
];

/**
 * Names no configured variable may set, whatever its source: they make Node, the dynamic loader
 * or a shell run code the user did not ask for.
 */
const NEVER_SET =
  /^(NODE_OPTIONS|NODE_PATH|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|BASH_ENV|ENV|PROMPT_COMMAND|DYLD_.*)$/i;

/** Credential-looking names: accepted only when the value was resolved from a secret. */
const CREDENTIAL_LIKE =
  /(^|_)(TOKEN|TOKENS|KEY|KEYS|SECRET|SECRETS|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|CREDENTIALS|APIKEY|AUTH|COOKIE)(_|$)/i;

const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_().]*$/;

/** Whether `name` looks like it carries a credential (`GITHUB_TOKEN`, `API_KEY`, `X_SECRET`…). */
export function isCredentialLikeName(name: string): boolean {
  return CREDENTIAL_LIKE.test(name);
}

/** Whether `name` may never be set for a child (`NODE_OPTIONS`, `LD_PRELOAD`, …). */
export function isNeverSetName(name: string): boolean {
  return NEVER_SET.test(name);
}

/** The allowlisted names for `platform`, upper-cased for comparison. */
function allowlistFor(platform: NodeJS.Platform): ReadonlySet<string> {
  return new Set(platform === 'win32' ? WINDOWS_ENV_ALLOWLIST : POSIX_ENV_ALLOWLIST);
}

function allowed(name: string, list: ReadonlySet<string>, platform: NodeJS.Platform): boolean {
  const key = platform === 'win32' ? name.toUpperCase() : name;
  if (list.has(key)) return true;
  return platform !== 'win32' && key.startsWith('LC_');
}

/**
 * Builds a child's environment. Guarantees: the result holds only allowlisted parent variables
 * (never a credential-like or never-set name even if someone allowlisted it) and the `extra`
 * entries; an `extra` entry with an invalid name, a never-set name, or a credential-like name from
 * literal config throws `ProcessRunError` (`env_variable_refused`) naming the variable, never its
 * value.
 */
export function buildChildEnv(
  parent: Readonly<Record<string, string | undefined>>,
  extra: readonly ChildEnvEntry[] = [],
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const list = allowlistFor(platform);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (!allowed(name, list, platform)) continue;
    if (isNeverSetName(name) || isCredentialLikeName(name)) continue;
    env[name] = value;
  }
  for (const entry of extra) {
    const refuse = (why: string): never => {
      throw new ProcessRunError(
        ProcessRunErrorCode.envVariableRefused,
        `configured variable "${entry.name}" is refused: ${why}`,
      );
    };
    if (!VALID_NAME.test(entry.name)) refuse('not a valid variable name');
    if (isNeverSetName(entry.name)) refuse('it can make the child run injected code');
    if (isCredentialLikeName(entry.name) && entry.source !== 'secret') {
      refuse('a credential-like variable must come from a secret reference');
    }
    if (entry.value.includes('\0')) refuse('the value contains a NUL byte');
    env[entry.name] = entry.value;
  }
  return env;
}
