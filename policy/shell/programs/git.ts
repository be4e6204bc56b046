/**
 * git command lines: global options before the subcommand (-C, -c, --git-dir, ...), config
 * values that are shell commands (core.sshCommand, core.pager, alias.*, ...), and the history
 * rewrite rules (force push, +refspec, filter-branch, filter-repo).
 */
import type { CommandEnv, Verdict } from '../effects/env.ts';
import type { Field } from '../syntax/field.ts';
import { hasFlag, parseOptions } from './options.ts';
import type { OptionSpec } from './options.ts';

/** The global part of a git command line. */
export interface GitParse {
  /** The subcommand word, or null when there is none. */
  readonly sub: Field | null;
  /** The arguments after the subcommand. */
  readonly args: readonly Field[];
  /** `-c key=value` settings (key lower-cased; value null when the setting is not literal). */
  readonly configs: readonly { readonly key: string; readonly value: string | null }[];
  /** True when a non-literal word stood among the global options. */
  readonly dynamic: boolean;
}

const GLOBAL_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--config-env',
  '--list-cmds',
  '--attr-source',
]);

/** Parses git's global options up to the subcommand. */
export function parseGit(args: readonly Field[]): GitParse {
  const configs: { key: string; value: string | null }[] = [];
  let dynamic = false;
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    const v = f.value;
    if (v === null) {
      if (f.prefix.startsWith('-')) {
        dynamic = true;
        continue;
      }
      return { sub: f, args: args.slice(i + 1), configs, dynamic: true };
    }
    if (!v.startsWith('-')) return { sub: f, args: args.slice(i + 1), configs, dynamic };
    const name = v.split('=')[0] ?? v;
    if (GLOBAL_WITH_VALUE.has(name)) {
      const value =
        v.includes('=') && name.startsWith('--') ? v.slice(name.length + 1) : (args[i + 1]?.value ?? null);
      if (!(v.includes('=') && name.startsWith('--'))) i++;
      if (name === '-c' || name === '--config-env') {
        if (value === null) {
          configs.push({ key: '', value: null });
        } else {
          const eq = value.indexOf('=');
          configs.push({
            key: (eq < 0 ? value : value.slice(0, eq)).toLowerCase(),
            value: name === '--config-env' ? null : eq < 0 ? 'true' : value.slice(eq + 1),
          });
        }
      }
    }
  }
  return { sub: null, args: [], configs, dynamic };
}

const COMMAND_KEYS = new Set([
  'core.sshcommand',
  'core.pager',
  'core.editor',
  'core.fsmonitor',
  'core.askpass',
  'core.gitproxy',
  'sequence.editor',
  'gpg.program',
  'gpg.ssh.program',
  'gpg.x509.program',
  'gpg.openpgp.program',
  'credential.helper',
  'diff.external',
  'uploadpack.packobjectshook',
  'interactive.difffilter',
  'sendemail.sendmailcmd',
  'web.browser',
]);

/** True when a git config key holds a shell command. */
export function isCommandKey(key: string): boolean {
  return (
    COMMAND_KEYS.has(key) ||
    key.startsWith('pager.') ||
    /\.(cmd|command|textconv|clean|smudge|process|driver|helper|uploadpack|receivepack|program)$/.test(key)
  );
}

/**
 * Analyzes `-c` settings that hold shell commands (recursively, as code) and refuses aliases
 * and settings that are not literal. Returns false when analysis must stop.
 */
export function analyzeGitConfigs(parse: GitParse, env: CommandEnv): void {
  for (const { key, value } of parse.configs) {
    if (key.startsWith('alias.') || key === '') {
      env.unanalyzable('unanalyzable.git-alias', 'git -c alias.* (or --config-env) may run anything');
      continue;
    }
    if (!isCommandKey(key)) continue;
    if (value === null) {
      env.unanalyzable('unanalyzable.dynamic-code', `git -c ${key} is not literal`);
      continue;
    }
    env.analyzeCode(value.startsWith('!') ? value.slice(1) : value);
  }
}

const PUSH: OptionSpec = {
  shortValue: 'o',
  longValue: ['repo', 'receive-pack', 'exec', 'push-option'],
  longFlags: [
    'all',
    'branches',
    'mirror',
    'tags',
    'follow-tags',
    'atomic',
    'no-atomic',
    'dry-run',
    'porcelain',
    'delete',
    'prune',
    'force',
    'force-with-lease',
    'no-force-with-lease',
    'force-if-includes',
    'no-force-if-includes',
    'set-upstream',
    'thin',
    'no-thin',
    'quiet',
    'verbose',
    'progress',
    'no-progress',
    'no-verify',
    'verify',
    'ipv4',
    'ipv6',
    'signed',
    'no-signed',
    'recurse-submodules',
    'no-recurse-submodules',
  ],
};

const FORCE_FLAGS = ['f', 'force', 'force-with-lease', 'force-if-includes', 'mirror'];

/** Hardline verdict of a git command line. */
export function gitVerdict(parse: GitParse): Verdict {
  const sub = parse.sub;
  if (sub === null) return null;
  if (sub.value === null) {
    return { unknown: 'unanalyzable.dynamic-argument', detail: 'git subcommand is not literal' };
  }
  const name = sub.value.toLowerCase();
  if (name === 'config') return null;
  if (name === 'filter-branch') return { match: 'hardline.git-filter-branch', detail: 'git filter-branch' };
  if (name === 'filter-repo') return { match: 'hardline.git-filter-repo', detail: 'git filter-repo' };
  if (name !== 'push') return null;
  const p = parseOptions(parse.args, PUSH);
  if (FORCE_FLAGS.some((f) => hasFlag(p, f)))
    return { match: 'hardline.git-push-force', detail: 'git push --force' };
  if (p.operands.some((o) => o.value?.startsWith('+'))) {
    return { match: 'hardline.git-push-force-refspec', detail: 'git push +refspec' };
  }
  if (parse.configs.some((c) => /^remote\..*\.(push|mirror)$/.test(c.key))) {
    return {
      unknown: 'unanalyzable.dynamic-argument',
      detail: 'git -c remote.*.push/mirror decides the push',
    };
  }
  if (p.dynamicOption || p.splittable || p.operands.some((o) => o.value === null) || parse.dynamic) {
    return {
      unknown: 'unanalyzable.dynamic-argument',
      detail: 'git push with a non-literal argument (-f or +refspec?)',
    };
  }
  return null;
}

const CONFIG: OptionSpec = {
  shortValue: 'fe',
  longValue: ['file', 'blob', 'type', 'default', 'comment', 'value', 'url'],
  longFlags: [
    'global',
    'system',
    'local',
    'worktree',
    'add',
    'replace-all',
    'unset',
    'unset-all',
    'get',
    'get-all',
    'list',
  ],
};

/**
 * `git config KEY VALUE` (and `git config set KEY VALUE`): setting an alias or a remote push
 * refspec is unanalyzable (a later command could run it), a command-valued key has its value
 * analyzed as code.
 */
export function analyzeGitConfigCommand(parse: GitParse, env: CommandEnv): void {
  if (parse.sub?.value?.toLowerCase() !== 'config') return;
  const p = parseOptions(parse.args, CONFIG);
  let operands = p.operands;
  if (operands[0]?.value === 'set') operands = operands.slice(1);
  const [keyField, valueField] = operands;
  if (keyField === undefined || valueField === undefined) return;
  if (keyField.value === null) {
    env.unanalyzable('unanalyzable.git-alias', 'git config of a key only known at run time');
    return;
  }
  const key = keyField.value.toLowerCase();
  if (key.startsWith('alias.') || /^remote\..*\.(push|mirror)$/.test(key) || key.startsWith('include')) {
    env.unanalyzable('unanalyzable.git-alias', `git config ${key} changes what later git commands run`);
    return;
  }
  if (!isCommandKey(key)) return;
  if (valueField.value === null) {
    env.unanalyzable('unanalyzable.dynamic-code', `git config ${key} with a non-literal command`);
    return;
  }
  env.analyzeCode(valueField.value.startsWith('!') ? valueField.value.slice(1) : valueField.value);
}
