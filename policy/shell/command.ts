/**
 * Analysis of one simple command after word expansion: program identity, wrappers and code
 * runners (recursively), cd tracking, find -exec, git config commands, hardline rules, and the
 * reads/writes of its arguments.
 */
import type { CommandEnv } from './effects/env.ts';
import { dynamicField, literalField } from './syntax/field.ts';
import type { Field } from './syntax/field.ts';
import {
  analyzeGitConfigCommand,
  analyzeGitConfigs,
  analyzeOptionRunners,
  CODE_RUNNERS,
  collectFileArgs,
  COMMAND_HEADS,
  CONTAINER_RUNNERS,
  credentialReads,
  gitPaths,
  hasFileTable,
  NO_PATH_PROGRAMS,
  OWN_PATHS,
  parseFind,
  parseGit,
  probeArguments,
  programNames,
  WRAPPERS,
} from './programs/index.ts';
import { hasFlag, parseOptions } from './programs/options.ts';
import { takesCode } from './programs/runners/consoles.ts';
import { pastesIntoCode } from './programs/runners/pasted.ts';
import { applyCommandRules } from './rules/index.ts';
import { runtimeControl } from './rules/runtime.ts';

/** Most wrapper layers and nested commands one command line may expand to. */
export const MAX_LAYERS = 48;

/** Most find starting points an -exec command is checked against, one by one. */
const MAX_FIND_STARTS = 16;

/** Environment variables whose value is a shell command run by a program (git, pagers, editors, bash). */
const COMMAND_VARS = new Set([
  'GIT_SSH_COMMAND',
  'GIT_SSH',
  'GIT_PAGER',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_EXTERNAL_DIFF',
  'GIT_ASKPASS',
  'GIT_PROXY_COMMAND',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'PAGER',
  'MANPAGER',
  'SYSTEMD_PAGER',
  'EDITOR',
  'VISUAL',
  'FCEDIT',
  'LESSOPEN',
  'LESSCLOSE',
  'BROWSER',
  'BASH_ENV',
  'ENV',
  'PROMPT_COMMAND',
]);

/** Variables that make the next program load code from a file (a library, a module, a script). */
const LOADER_VARS = new Set([
  'LD_PRELOAD',
  'LD_AUDIT',
  'LD_LIBRARY_PATH',
  'DYLD_INSERT_LIBRARIES',
  'DYLD_LIBRARY_PATH',
  'BASH_ENV',
  'ENV',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PERL5OPT',
  'PERL5LIB',
  'RUBYOPT',
  'RUBYLIB',
  'NODE_PATH',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
]);

/** NODE_OPTIONS flags that load code (`--require x`, `--import x`, `--loader x`). */
const NODE_LOADING = /(^|\s)(-r|--require|--import|--loader|--experimental-loader)(\s|=|$)/;

/** Variables that move git's repository or work tree. */
const GIT_PLACE_VARS = new Set(['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR']);

/** Variables that inject git configuration (an alias or push refspec could hide there). */
const GIT_CONFIG_VARS = /^GIT_CONFIG_(PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)$/;

/** Builtins that evaluate subscripts/arithmetic in their arguments (code can hide in a literal). */
const INDIRECT = new Set([
  'let',
  'read',
  'mapfile',
  'readarray',
  'unset',
  'test',
  '[',
  'getopts',
  'wait',
  'declare',
  'typeset',
  'local',
  'export',
  'readonly',
]);

/** Reserved words; as a command name they betray a parse the grammar got wrong. */
const RESERVED = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'for',
  'select',
  'case',
  'esac',
  'in',
  'function',
  '[[',
  ']]',
]);

/** True when a literal holds command-substitution syntax that bash could evaluate later. */
export function isCodeLike(f: Field): boolean {
  return f.value !== null && /\$\(|`|[<>]\(/.test(f.value);
}

/**
 * Checks a `NAME=value` assignment (prefix, `env`, `export`): command-valued variables have their
 * value analyzed as code; git config injection is unanalyzable.
 */
export function checkAssignment(name: string, value: Field | null, env: CommandEnv): void {
  // Code loaded from a file the analysis cannot read: a human decides.
  const loads =
    LOADER_VARS.has(name) ||
    (name === 'NODE_OPTIONS' && (value === null || value.value === null || NODE_LOADING.test(value.value)));
  if (loads && value?.value !== '')
    env.caution('caution.interpreter-code', `${name} makes the program load code`);
  if (GIT_CONFIG_VARS.test(name)) {
    env.unanalyzable('unanalyzable.git-alias', `${name} injects git configuration`);
    return;
  }
  if (GIT_PLACE_VARS.has(name)) {
    // git then works in (and may rewrite) that directory: it must be static and in the roots.
    if (value !== null)
      env.probe(value.value === null ? value : { ...value, tilde: /^~(\/|$)/.test(value.value) });
    else env.caution('caution.dynamic-path', `${name} is only known at run time`);
    return;
  }
  if (!COMMAND_VARS.has(name)) return;
  if (value === null || value.value === null) {
    env.unanalyzable('unanalyzable.dynamic-code', `${name} holds a command that is not literal`);
    return;
  }
  if (value.value !== '') env.analyzeCode(value.value);
}

function isAssignmentWord(f: Field): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/.test(f.value ?? f.prefix);
}

function checkAssignmentWords(args: readonly Field[], env: CommandEnv): void {
  for (const f of args) {
    const m =
      f.value === null
        ? /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(f.prefix)
        : /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(f.value);
    if (m === null) continue;
    const name = m[1] ?? '';
    checkAssignment(name, f.value === null ? null : literalField(f.value.slice(name.length + 1)), env);
  }
}

function cd(kind: 'cd' | 'pushd' | 'popd', args: readonly Field[], env: CommandEnv): void {
  const p = parseOptions(args, { stopAtOperand: true });
  const target = p.operands[0] ?? null;
  if (p.splittable) {
    env.changeDir(kind, dynamicField(true));
    return;
  }
  if (target !== null && target.value !== null && /^[+-]\d+$/.test(target.value)) {
    env.changeDir(kind, dynamicField(false));
    return;
  }
  // A cd target is a path like any other: static, inside the roots, not sensitive.
  env.changeDir(kind, target, hasFlag(p, 'P'));
  // A bare `cd` goes to $HOME: a read of it like `cd ~`.
  if (target !== null || kind === 'cd') env.read(literalField('.'));
}

function substitute(argv: readonly Field[], token: string, start: Field): Field[] {
  return argv.map((f) => {
    if (f.value === null || !f.value.includes(token)) return f;
    if (start.value === null) return dynamicField(false);
    if (f.value === token) return start;
    return literalField(f.value.split(token).join(start.value));
  });
}

function find(args: readonly Field[], env: CommandEnv, budget: { n: number }): void {
  const f = parseFind(args);
  const starts = f.starts.length > 0 ? f.starts : [literalField('.')];
  starts.forEach((s) => env.read(s));
  // The walk lists every name beneath the starts (`find ~ -name '*.pem'` looks into ~/.ssh);
  // -exec / -delete act on everything found there.
  const follow = f.follows;
  // A filtered delete (`-name '*.pyc' -delete`) may spare what it reaches; an unfiltered one cannot.
  const filtered = f.filtered;
  if (f.deletes) starts.forEach((s) => env.tree(s, 'write', { follow, filtered }));
  else if (f.execs.length > 0) starts.forEach((s) => env.tree(s, 'read', { follow }));
  else if (!f.shallow) starts.forEach((s) => env.tree(s, 'read', { follow, names: true }));
  if (f.deletes) starts.forEach((s) => env.write(s, false));
  f.outputs.forEach((o) => env.write(o, true));
  for (const e of f.execs) {
    if (pastesIntoCode(e.argv, '{}')) {
      env.unanalyzable('unanalyzable.dynamic-code', 'find pastes the names it finds into shell code');
      continue;
    }
    const list = starts.length > MAX_FIND_STARTS ? [dynamicField(false)] : starts;
    for (const s of list) analyzeArgv(substitute(e.argv, '{}', s), env, budget);
  }
}

/** fd / fdfind -x / -X: the command after it; fd's `{}` path tokens are values known only at run time. */
function fdExec(args: readonly Field[], env: CommandEnv, budget: { n: number }): void {
  const i = args.findIndex((a) => ['-x', '--exec', '-X', '--exec-batch'].includes(a.value ?? ''));
  if (i < 0) return;
  let argv = args.slice(i + 1);
  const end = argv.findIndex((a) => a.value === ';');
  if (end >= 0) argv = argv.slice(0, end);
  const fdPathToken = /\{[/.]*\/?\.?\}/;
  const hasToken = argv.some((a) => a.value !== null && fdPathToken.test(a.value));
  const expanded = argv.map((a) => (a.value !== null && fdPathToken.test(a.value) ? dynamicField(false) : a));
  analyzeArgv(hasToken ? expanded : [...expanded, dynamicField(false)], env, budget);
}

/**
 * Analyzes one expanded command line (`argv[0]` is the program). Reports every finding to `env`;
 * never throws for valid fields. `budget` bounds wrapper layers and nested commands.
 */
export function analyzeArgv(argv: readonly Field[], env: CommandEnv, budget: { n: number } = { n: 0 }): void {
  // `time FOO=1 cmd` assigns (time is a keyword); elsewhere a NAME=VALUE program fails to run.
  // Either way, treating it as an assignment is the stricter reading.
  let start = 0;
  while (start < argv.length - 1 && isAssignmentWord(argv[start] as Field)) {
    checkAssignmentWords([argv[start] as Field], env);
    start++;
  }
  if (start > 0) argv = argv.slice(start);
  const first = argv[0];
  if (first === undefined) return;
  if (first.value !== null && !first.quoted && RESERVED.has(first.value)) {
    // tree-sitter-bash reads `! if ...`, `time { ...; }`, `! until ...` as commands named by
    // the reserved word: the structure is unreliable, the rest is still checked.
    env.unanalyzable(
      'unanalyzable.parse-error',
      `the parser read the reserved word ${first.value} as a command`,
    );
    analyzeArgv(argv.slice(1), env, budget);
    return;
  }
  if (++budget.n > MAX_LAYERS) {
    env.unanalyzable('unanalyzable.limit-exceeded', 'too many nested wrappers or commands');
    return;
  }
  if (first.value === null || first.glob) {
    env.unanalyzable('unanalyzable.dynamic-program', 'the program name is not a literal word');
    return;
  }
  const names = programNames(first);
  const name = names[0];
  if (name === undefined) return;
  env.noteProgram(names);
  const args = argv.slice(1);
  if (first.value.includes('/') && env.wasWritten(first)) {
    env.unanalyzable(
      'unanalyzable.generated-script',
      `${first.value} is written earlier in the same command`,
    );
    return;
  }
  if (names.some((n) => INDIRECT.has(n)) && args.some(isCodeLike)) {
    env.unanalyzable(
      'unanalyzable.indirect-evaluation',
      `${name} may evaluate a command substitution held in a literal`,
    );
  }
  if (name === 'printf' && args.some((a) => a.value?.startsWith('-v')) && args.some(isCodeLike)) {
    env.unanalyzable(
      'unanalyzable.indirect-evaluation',
      'printf -v may evaluate a subscript held in a literal',
    );
  }
  if (name === 'cd' || name === 'pushd' || name === 'popd' || name === 'chdir') {
    cd(name === 'chdir' ? 'cd' : name, args, env);
    return;
  }
  if (
    name === 'shopt' &&
    args.some((a) => a.value === null || /^(dotglob|nocaseglob|extglob|nullglob|failglob)$/.test(a.value))
  ) {
    // These change which paths a glob names (dot files, case, extended patterns).
    if (!args.some((a) => a.value === '-u' || a.value === '-p' || a.value === '-q'))
      env.caution('caution.dynamic-path', 'shopt changes what globs match');
  }
  if (name === 'hash' && args.some((a) => a.value === null || a.value.startsWith('-p'))) {
    env.unanalyzable('unanalyzable.dynamic-program', 'hash -p rebinds a command name');
    return;
  }
  if (name === 'enable' && args.some((a) => a.value === null || /^-[a-z]*f/.test(a.value))) {
    env.unanalyzable('unanalyzable.dynamic-program', 'enable -f loads a builtin from a shared object');
    return;
  }
  if (name === 'env' || name === 'sudo' || name === 'doas' || name === 'export')
    checkAssignmentWords(args, env);
  analyzeOptionRunners(names, args, env, (inner, innerEnv) => analyzeArgv(inner, innerEnv, budget));
  const runner = names
    .map((n) => WRAPPERS[n] ?? CODE_RUNNERS[n] ?? CONTAINER_RUNNERS[n])
    .find((w) => w !== undefined);
  // Launchers (node, npx, npm, tsx) are code runners: check the runtime's control CLI first.
  const launcher = names.find((n) => runtimeControl.applies(n));
  if (launcher !== undefined) env.verdict(runtimeControl.check(args, env, launcher));
  if (runner !== undefined) {
    const r = runner(args, env, name);
    switch (r.kind) {
      case 'exec': {
        const base = r.env ?? env;
        const innerEnv = r.chdir !== undefined ? base.withChdir(r.chdir) : base;
        for (const inner of r.argvs) analyzeArgv(inner, innerEnv, budget);
        return;
      }
      case 'code':
        env.analyzeCode(r.code, {
          sameShell: r.sameShell === true,
          ...(r.fromStdin === true ? { stdin: { kind: 'inherit' } as const } : {}),
        });
        return;
      case 'done':
        return;
      case 'unknown':
        env.unanalyzable(r.ruleId, r.detail);
        return;
    }
  }
  if (name === 'git') {
    const parsed = parseGit(args);
    analyzeGitConfigs(parsed, env);
    analyzeGitConfigCommand(parsed, env);
  }
  applyCommandRules(names, args, env);
  if (name === 'find' || name === 'gfind') find(args, env, budget);
  else if (name === 'fd' || name === 'fdfind') fdExec(args, env, budget);
  else if (name === 'git' || name === 'hub') gitPaths(args, env);
  for (const n of names) collectFileArgs(n, args, env);
  credentialReads(names, args, env);
  // The one fail-closed rule: a program without a table may read or write any argument.
  const tabled = names.some((n) => NO_PATH_PROGRAMS.has(n) || hasFileTable(n) || OWN_PATHS.has(n));
  if (!tabled) {
    probeArguments(args, env);
    // An unknown program given code (`tool --eval '...'`, `tool -e 'plot sin(x)'`) is an interpreter.
    if (takesCode(args)) env.caution('caution.interpreter-code', `${name} is given code to run`);
    // An unknown program may run a command given in its arguments: analyze it from its head on.
    const head = args.findIndex((a) => {
      const n = a.value === null || a.value.startsWith('-') ? undefined : programNames(a)[0];
      return n !== undefined && (COMMAND_HEADS.has(n) || /^mkfs\./.test(n));
    });
    if (head >= 0) analyzeArgv(args.slice(head), env, budget);
    // A command line held in one argument (`tool 'rm -rf /'`) may run: a human decides.
    for (const a of args) {
      if (a.value !== null && /\s/.test(a.value) && startsCommand(a.value) && env.hasEffects(a.value))
        env.caution('caution.interpreter-code', `${name} is given a command line it may run`);
    }
  }
}

/** True when `text` starts with a word naming one of the command heads. */
function startsCommand(text: string): boolean {
  const first = /^\s*([^\s;|&]+)/.exec(text)?.[1] ?? '';
  const name = programNames(literalField(first))[0];
  return name !== undefined && (COMMAND_HEADS.has(name) || hasFileTable(name) || /^mkfs\./.test(name));
}
