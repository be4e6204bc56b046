/**
 * Hardline command rules as data: each entry names the programs it inspects, the stable ids it
 * can produce, and a pure check over the command's fields. Structural rules (redirection into a
 * device, fork bombs, writes into devices) are applied by the walker with ids from ids.ts.
 */
import type { CommandEnv, Verdict } from './env.ts';
import { literalField } from './field.ts';
import type { Field } from './field.ts';
import { parseFind } from './find.ts';
import { gitVerdict, parseGit } from './git.ts';
import type { HardlineRuleId } from './ids.ts';
import { hasFlag, parseOptions } from './options.ts';
import type { OptionSpec } from './options.ts';
import type { ProtectedClass } from './paths.ts';
import { classifyPosix, classifyWindows, deviceKind, hasUnknownWindowsVar } from './paths.ts';
import { programNames } from './program.ts';

/** One hardline command rule. */
export interface CommandRule {
  /** The ids this rule can report. */
  readonly ids: readonly HardlineRuleId[];
  /** True when the rule inspects a program of this (lower-case, basename) name. */
  readonly applies: (name: string) => boolean;
  /** The verdict for the arguments after the program name. */
  readonly check: (args: readonly Field[], env: CommandEnv, name: string) => Verdict;
}

const RANK: Readonly<Record<ProtectedClass, number>> = { root: 3, home: 2, system: 1 };

function higher(a: ProtectedClass | null, b: ProtectedClass | null): ProtectedClass | null {
  if (a === null) return b;
  if (b === null) return a;
  return RANK[b] > RANK[a] ? b : a;
}

/** The protection class of a path argument and whether it (or the cwd) is only known at run time. */
export function targetClass(
  field: Field,
  env: CommandEnv,
  windows = false,
): { cls: ProtectedClass | null; unknown: boolean } {
  if (windows && field.win !== null && hasUnknownWindowsVar(field.win)) return { cls: null, unknown: true };
  if (windows && field.win !== null) {
    const w = classifyWindows(field.win);
    if (w !== null) return { cls: w, unknown: false };
  }
  const r = env.resolve(field);
  let cls: ProtectedClass | null = null;
  for (const ref of r.refs) {
    cls = higher(cls, classifyPosix(ref.pattern, ref.tilde));
    if (ref.win !== null && ref.win.includes('\\')) cls = higher(cls, classifyWindows(ref.win));
  }
  return { cls, unknown: r.unknown };
}

function worst(
  fields: readonly Field[],
  env: CommandEnv,
  windows = false,
): { cls: ProtectedClass | null; unknown: boolean } {
  let cls: ProtectedClass | null = null;
  let unknown = false;
  for (const f of fields) {
    const t = targetClass(f, env, windows);
    cls = higher(cls, t.cls);
    unknown ||= t.unknown;
  }
  return { cls, unknown };
}

/**
 * Windows commands read `C:\ -Recurse` as two words where bash reads one (`\ ` escapes the
 * space): literal words are split again at backslash-space, keeping the backslash.
 */
export function windowsWords(args: readonly Field[]): Field[] {
  const out: Field[] = [];
  for (const f of args) {
    if (f.value === null || f.win === null || !/\\ /.test(f.win)) {
      out.push(f);
      continue;
    }
    for (const piece of f.win.split(/(?<=\\) +/)) {
      if (piece !== '') out.push({ ...literalField(piece), tilde: f.tilde && out.length === 0 });
    }
  }
  return out;
}

/**
 * Recursive deletes are hardline on `/`, homes (`~`, `$HOME`, `~user`, /home/x, /Users/x,
 * C:\Users\x), system directories (paths.ts) and whole-directory globs of those (`/*`, `~/*`,
 * `/etc/*`). `rm -rf .` / `rm -rf *` are not: they stay inside the working directory, and the
 * engine checks every write against the roots (so `rm -rf ..` is denied there as outside_roots).
 */
const RM_IDS: Readonly<Record<ProtectedClass, HardlineRuleId>> = {
  root: 'hardline.rm-recursive-root',
  home: 'hardline.rm-recursive-home',
  system: 'hardline.rm-recursive-system',
};

/**
 * The shared shape of "recursive X of a protected path": literal recursion + protected target
 * matches; recursion that might be given by a non-literal word, or a target only known at run
 * time, is unknown.
 */
function recursiveOnProtected(
  recursive: boolean,
  maybeRecursive: boolean,
  splittable: boolean,
  targets: readonly Field[],
  env: CommandEnv,
  id: (cls: ProtectedClass) => HardlineRuleId,
  what: string,
  windows = false,
): Verdict {
  if (!recursive && !maybeRecursive) return null;
  const { cls, unknown } = worst(targets, env, windows);
  if (cls !== null) {
    return recursive
      ? { match: id(cls), detail: `${what} of a protected path (${cls})` }
      : {
          unknown: 'unanalyzable.dynamic-argument',
          detail: `${what}: a non-literal option with a protected path`,
        };
  }
  if (recursive && (unknown || splittable)) {
    return { unknown: 'unanalyzable.dynamic-argument', detail: `${what} of a path only known at run time` };
  }
  if (maybeRecursive && splittable) {
    return {
      unknown: 'unanalyzable.dynamic-argument',
      detail: `${what}: non-literal words may add flags and paths`,
    };
  }
  return null;
}

const RM: OptionSpec = {
  longFlags: [
    'recursive',
    'force',
    'interactive',
    'one-file-system',
    'no-preserve-root',
    'preserve-root',
    'dir',
    'verbose',
    'help',
    'version',
  ],
};

const rm: CommandRule = {
  ids: ['hardline.rm-recursive-root', 'hardline.rm-recursive-home', 'hardline.rm-recursive-system'],
  applies: (n) => n === 'rm' || n === 'rimraf' || n === 'srm',
  check(args, env, name) {
    const p = parseOptions(windowsWords(args), RM);
    const recursive = name === 'rimraf' || hasFlag(p, 'r', 'R', 'recursive');
    if (recursive && p.operands.length === 0 && env.stdin.kind === 'pipe') {
      // PowerShell's rm alias (Remove-Item) takes its paths from the pipeline.
      return { unknown: 'unanalyzable.dynamic-argument', detail: 'recursive delete of paths from a pipe' };
    }
    const maybe = !recursive && (p.dynamicOption || p.splittable);
    return recursiveOnProtected(
      recursive,
      maybe,
      p.splittable,
      p.operands,
      env,
      (c) => RM_IDS[c],
      'recursive delete',
    );
  },
};

const DELETE_PROGRAMS = new Set([
  'rm',
  'rmdir',
  'unlink',
  'shred',
  'srm',
  'rimraf',
  'truncate',
  'wipe',
  'mv',
]);

const find: CommandRule = {
  ids: ['hardline.find-delete-protected'],
  applies: (n) => n === 'find' || n === 'gfind',
  check(args, env) {
    const f = parseFind(args);
    const destructive =
      f.deletes ||
      f.execs.some((e) =>
        e.argv.some(
          (w) =>
            programNames(w).some((n) => DELETE_PROGRAMS.has(n)) ||
            (w.value !== null && /\b(rm|shred|unlink|rmdir|srm)\b/.test(w.value)),
        ),
      );
    if (!destructive && !f.dynamicExpression) return null;
    const starts = f.starts.length > 0 ? f.starts : [];
    const { cls, unknown } = worst(starts, env);
    if (cls !== null) {
      return destructive
        ? {
            match: 'hardline.find-delete-protected',
            detail: `find over a protected path (${cls}) that deletes`,
          }
        : {
            unknown: 'unanalyzable.dynamic-argument',
            detail: 'find over a protected path with a non-literal expression',
          };
    }
    if (destructive && unknown) {
      return {
        unknown: 'unanalyzable.dynamic-argument',
        detail: 'find that deletes under a path known only at run time',
      };
    }
    return null;
  },
};

const RSYNC: OptionSpec = {
  shortValue: 'efTBM',
  longValue: [
    'rsh',
    'filter',
    'exclude',
    'include',
    'exclude-from',
    'include-from',
    'files-from',
    'temp-dir',
    'partial-dir',
    'backup-dir',
    'suffix',
    'chmod',
    'chown',
    'remote-option',
    'rsync-path',
    'log-file',
    'out-format',
    'password-file',
    'port',
    'timeout',
    'bwlimit',
    'max-size',
    'min-size',
    'compare-dest',
    'copy-dest',
    'link-dest',
    'block-size',
    'info',
    'debug',
    'iconv',
    'usermap',
    'groupmap',
  ],
  longFlags: [
    'delete',
    'delete-before',
    'delete-during',
    'delete-delay',
    'delete-after',
    'delete-excluded',
    'del',
    'remove-source-files',
    'recursive',
    'archive',
  ],
};

/** True for an rsync/scp operand that names a remote host (`host:path`, `user@host:path`, `rsync://`). */
export function isRemoteOperand(v: string): boolean {
  return /^[^/]*:/.test(v) && !/^[a-zA-Z]:[\\/]/.test(v);
}

const rsync: CommandRule = {
  ids: ['hardline.rsync-delete-protected'],
  applies: (n) => n === 'rsync',
  check(args, env) {
    const p = parseOptions(args, RSYNC);
    const deletes = [...p.flags.keys()].some((k) => k.startsWith('del'));
    if (!deletes || p.operands.length < 2) return null;
    const dest = p.operands[p.operands.length - 1] as Field;
    if (dest.value !== null && isRemoteOperand(dest.value)) return null;
    const t = targetClass(dest, env);
    if (t.cls !== null)
      return { match: 'hardline.rsync-delete-protected', detail: `rsync --delete into ${t.cls}` };
    if (t.unknown)
      return { unknown: 'unanalyzable.dynamic-argument', detail: 'rsync --delete into a non-literal path' };
    return null;
  },
};

const mv: CommandRule = {
  ids: ['hardline.mv-protected'],
  applies: (n) => n === 'mv',
  check(args, env) {
    const p = parseOptions(args, { shortValue: 'tS', longValue: ['target-directory', 'suffix', 'backup'] });
    const sources = hasFlag(p, 't', 'target-directory') ? p.operands : p.operands.slice(0, -1);
    const literal = sources.filter((f) => f.value !== null);
    const { cls } = worst(literal, env);
    return cls !== null
      ? { match: 'hardline.mv-protected', detail: `moving a protected path (${cls})` }
      : null;
  },
};

function onlyInfo(args: readonly Field[]): boolean {
  return args.length === 1 && ['--help', '-h', '--version', '-V'].includes(args[0]?.value ?? '');
}

const mkfs: CommandRule = {
  ids: ['hardline.mkfs'],
  applies: (n) =>
    /^mkfs([._-].*)?$/.test(n) ||
    /^newfs(_.*)?$/.test(n) ||
    ['mke2fs', 'mkswap', 'mkdosfs', 'mkntfs', 'mkexfatfs'].includes(n),
  check: (args, _env, name) => (onlyInfo(args) ? null : { match: 'hardline.mkfs', detail: name }),
};

function deviceVerdict(fields: readonly Field[], env: CommandEnv, id: HardlineRuleId, what: string): Verdict {
  let unknown = false;
  for (const f of fields) {
    const r = env.resolve(f);
    if (
      r.refs.some(
        (ref) => deviceKind(ref.text, ref.glob) === 'device' || deviceKind(ref.win ?? '') === 'device',
      )
    ) {
      return { match: id, detail: `${what} a device` };
    }
    unknown ||= r.unknown;
  }
  return unknown
    ? { unknown: 'unanalyzable.dynamic-argument', detail: `${what} a path only known at run time` }
    : null;
}

/** The `of=` operand of dd as a path field. */
function ddTarget(f: Field & { value: string }): Field {
  return {
    ...f,
    value: f.value.slice(3),
    win: f.win?.slice(3) ?? null,
    pattern: f.pattern?.slice(3) ?? null,
    prefix: f.prefix.slice(3),
    tilde: f.value.startsWith('of=~'),
  };
}

const dd: CommandRule = {
  ids: ['hardline.dd-device'],
  applies: (n) => n === 'dd' || n === 'dcfldd',
  check(args, env) {
    const targets: Field[] = [];
    let dynamic = false;
    for (const f of args) {
      if (f.value === null) {
        dynamic ||= f.prefix.startsWith('of=') || 'of='.startsWith(f.prefix);
      } else if (f.value.startsWith('of=')) {
        targets.push(ddTarget(f as Field & { value: string }));
      }
    }
    const v = deviceVerdict(targets, env, 'hardline.dd-device', 'dd writes to');
    if (v !== null && 'match' in v) return v;
    if (dynamic)
      return { unknown: 'unanalyzable.dynamic-argument', detail: 'dd with a non-literal operand (of=?)' };
    return v;
  },
};

const partition: CommandRule = {
  ids: ['hardline.partition-table'],
  applies: (n) => ['fdisk', 'sfdisk', 'cfdisk', 'gdisk', 'sgdisk', 'cgdisk', 'parted', 'gparted'].includes(n),
  check(args, _env, name) {
    const first = args[0]?.value;
    if (
      onlyInfo(args) ||
      first === '-l' ||
      first === '--list' ||
      (name === 'sfdisk' && (first === '-d' || first === '--dump'))
    ) {
      return null;
    }
    return { match: 'hardline.partition-table', detail: name };
  },
};

const wipefs: CommandRule = {
  ids: ['hardline.wipefs'],
  applies: (n) => n === 'wipefs' || n === 'blkdiscard' || n === 'nvme',
  check(args, _env, name) {
    if (onlyInfo(args)) return null;
    if (name === 'nvme') {
      const verb = args[0];
      if (verb === undefined) return null;
      if (verb.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'nvme verb is not literal' };
      return ['format', 'sanitize'].includes(verb.value)
        ? { match: 'hardline.wipefs', detail: `nvme ${verb.value}` }
        : null;
    }
    return { match: 'hardline.wipefs', detail: name };
  },
};

const shred: CommandRule = {
  ids: ['hardline.shred-device'],
  applies: (n) => n === 'shred',
  check(args, env) {
    const p = parseOptions(args, {
      shortValue: 'ns',
      longValue: ['iterations', 'size', 'random-source', 'remove'],
    });
    return deviceVerdict(p.operands, env, 'hardline.shred-device', 'shred of');
  },
};

const DISKUTIL_VERBS = new Set([
  'zerodisk',
  'randomdisk',
  'secureerase',
  'reformat',
  'partitiondisk',
  'deletecontainer',
  'deletevolume',
]);

const diskutil: CommandRule = {
  ids: ['hardline.diskutil-erase'],
  applies: (n) => n === 'diskutil',
  check(args) {
    for (const f of args.slice(0, 2)) {
      if (f.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'diskutil verb is not literal' };
      const v = f.value.toLowerCase();
      if (v.startsWith('erase') || DISKUTIL_VERBS.has(v))
        return { match: 'hardline.diskutil-erase', detail: `diskutil ${f.value}` };
      if (v !== 'apfs' && v !== 'cs' && v !== 'corestorage') break;
    }
    return null;
  },
};

const format: CommandRule = {
  ids: ['hardline.windows-format'],
  applies: (n) => n === 'format',
  check(args) {
    for (const f of args) {
      const v = f.win ?? f.value;
      if (v === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'format with a non-literal argument' };
      if (/^[a-zA-Z]:/.test(v)) return { match: 'hardline.windows-format', detail: `format ${v}` };
    }
    return null;
  },
};

const diskpart: CommandRule = {
  ids: ['hardline.diskpart'],
  applies: (n) => n === 'diskpart',
  check: () => ({ match: 'hardline.diskpart', detail: 'diskpart' }),
};

const psDisk: CommandRule = {
  ids: ['hardline.powershell-disk-destroy'],
  applies: (n) =>
    ['format-volume', 'clear-disk', 'initialize-disk', 'remove-partition', 'reset-physicaldisk'].includes(n),
  check: (_args, _env, name) => ({ match: 'hardline.powershell-disk-destroy', detail: name }),
};

const recursiveChange = (id: HardlineRuleId, names: readonly string[], what: string): CommandRule => ({
  ids: [id],
  applies: (n) => names.includes(n),
  check(args, env, name) {
    const p = parseOptions(args, {
      longValue: ['reference', 'from'],
      longFlags: [
        'recursive',
        'changes',
        'silent',
        'quiet',
        'verbose',
        'no-preserve-root',
        'preserve-root',
        'dereference',
        'no-dereference',
      ],
    });
    // chmod accepts modes that look like options (-x, -rwx): only R (and --recursive) is recursion.
    const recursive = hasFlag(p, 'R', 'recursive');
    const maybe = !recursive && (p.dynamicOption || p.splittable);
    // chmod takes modes that look like options (-x, -rwx): then every operand is a target.
    const modeAsOption =
      name === 'chmod' && [...p.flags.keys()].some((k) => k.length === 1 && 'rwxXstugoa'.includes(k));
    const targets = hasFlag(p, 'reference') || modeAsOption ? p.operands : p.operands.slice(1);
    return recursiveOnProtected(recursive, maybe, p.splittable, targets, env, () => id, what);
  },
});

const shutdown: CommandRule = {
  ids: ['hardline.system-shutdown'],
  applies: (n) =>
    [
      'shutdown',
      'reboot',
      'halt',
      'poweroff',
      'init',
      'telinit',
      'systemctl',
      'loginctl',
      'stop-computer',
      'restart-computer',
      'openrc-shutdown',
    ].includes(n),
  check(args, _env, name) {
    const hit: Verdict = { match: 'hardline.system-shutdown', detail: name };
    if (name === 'shutdown') {
      const vals = args.map((a) => a.value?.toLowerCase());
      if (vals.some((v) => v === '-c' || v === '/a' || v === '--help')) return null;
      return hit;
    }
    if (name === 'init' || name === 'telinit') {
      const v = args[0];
      if (v === undefined) return null;
      if (v.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: `${name} runlevel is not literal` };
      return ['0', '1', '6', 's', 'S'].includes(v.value) ? hit : null;
    }
    if (name === 'systemctl' || name === 'loginctl') {
      const p = parseOptions(args, {
        shortValue: 'HMtpsnoP',
        longValue: [
          'host',
          'machine',
          'type',
          'property',
          'signal',
          'lines',
          'output',
          'root',
          'message',
          'when',
        ],
      });
      const verb = p.operands[0];
      if (verb === undefined) return null;
      if (verb.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: `${name} verb is not literal` };
      const v = verb.value.toLowerCase();
      if (['poweroff', 'reboot', 'halt', 'kexec', 'soft-reboot', 'emergency', 'rescue'].includes(v))
        return hit;
      if (['start', 'isolate', 'restart'].includes(v)) {
        const targets = p.operands.slice(1).map((o) => o.value?.toLowerCase() ?? null);
        if (targets.some((t) => t === null))
          return { unknown: 'unanalyzable.dynamic-argument', detail: `${name} unit is not literal` };
        if (
          targets.some((t) =>
            /^(poweroff|reboot|halt|kexec|shutdown|emergency|rescue)(\.target)?$/.test(t ?? ''),
          )
        )
          return hit;
      }
      return null;
    }
    return hit;
  },
};

const ALL_PATTERNS = new Set(['.', '.*', '^', '$', '^.*$', '.+', '^.*', '']);

const kill: CommandRule = {
  ids: ['hardline.kill-all-processes'],
  applies: (n) => ['kill', 'killall5', 'pkill', 'killall'].includes(n),
  check(args, _env, name) {
    const hit: Verdict = { match: 'hardline.kill-all-processes', detail: `${name} of every process` };
    if (name === 'killall5') return hit;
    if (name === 'pkill' || name === 'killall') {
      const operands = args.filter((a) => a.value === null || !a.value.startsWith('-'));
      return operands.some((o) => o.value !== null && ALL_PATTERNS.has(o.value)) ? hit : null;
    }
    let i = 0;
    const first = args[0];
    if (
      first?.value === '-l' ||
      first?.value === '-L' ||
      first?.value === '--list' ||
      first?.value === '--table'
    )
      return null;
    if (first?.value === '-s' || first?.value === '-n' || first?.value === '--signal') i = 2;
    else if (first?.value?.startsWith('-') && first.value !== '--' && !/^-0*1$/.test(first.value)) i = 1;
    else if (
      first?.value !== undefined &&
      first.value !== null &&
      /^-0*1$/.test(first.value) &&
      args.length > 1
    )
      i = 1;
    for (; i < args.length; i++) {
      const a = args[i] as Field;
      if (a.value === '--') continue;
      if (a.value === null) {
        if (a.pids) continue;
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'kill of a pid only known at run time' };
      }
      if (/^-0*1$/.test(a.value)) return hit;
    }
    if (args.some((a) => a.value === null && !a.pids))
      return { unknown: 'unanalyzable.dynamic-argument', detail: 'kill with a non-literal signal' };
    return null;
  },
};

const git: CommandRule = {
  ids: [
    'hardline.git-push-force',
    'hardline.git-push-force-refspec',
    'hardline.git-filter-branch',
    'hardline.git-filter-repo',
  ],
  applies: (n) => n === 'git' || n === 'git-filter-branch' || n === 'git-filter-repo',
  check(args, _env, name) {
    if (name === 'git-filter-branch') return { match: 'hardline.git-filter-branch', detail: name };
    if (name === 'git-filter-repo') return { match: 'hardline.git-filter-repo', detail: name };
    return gitVerdict(parseGit(args));
  },
};

/** Splits Windows switches (`/s/q`, `/S`, `-r`) from targets for del, erase, rd, rmdir. */
function windowsDelete(args: readonly Field[]): { recursive: boolean; dynamic: boolean; targets: Field[] } {
  let recursive = false;
  let dynamic = false;
  const targets: Field[] = [];
  for (const f of args) {
    const v = f.value;
    if (v === null) {
      dynamic = true;
      targets.push(f);
      continue;
    }
    if (/^(\/[a-zA-Z?](:[^/]*)?)+$/.test(v)) {
      if (/\/s(?![a-z])/i.test(v)) recursive = true;
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      const opt = v.slice(1).toLowerCase().split(':')[0] ?? '';
      if (opt.length > 0 && 'recurse'.startsWith(opt)) recursive = true;
      continue;
    }
    targets.push(f);
  }
  return { recursive, dynamic, targets };
}

/**
 * del/erase/rd/rmdir with /s are hardline on the same targets as `rm -r` (drive roots, system
 * directories, user profiles, their contents, `%VAR%`s naming them); `rd /s /q build` inside a
 * project is not (it is `rm -rf build`). A target only known at run time is unanalyzable.
 */
const windowsDel: CommandRule = {
  ids: ['hardline.windows-recursive-delete'],
  applies: (n) => ['del', 'erase', 'rd', 'rmdir'].includes(n),
  check(args, env) {
    const d = windowsDelete(windowsWords(args));
    return recursiveOnProtected(
      d.recursive,
      !d.recursive && d.dynamic,
      d.dynamic,
      d.targets,
      env,
      () => 'hardline.windows-recursive-delete',
      'recursive delete',
      true,
    );
  },
};

const PS_PATH_PARAMS = ['path', 'literalpath', 'pspath', 'lp'];

/** Remove-Item style arguments: recursion switch, dynamic words and target paths (comma lists split). */
function removeItemArgs(args: readonly Field[]): { recursive: boolean; dynamic: boolean; targets: Field[] } {
  let recursive = false;
  let dynamic = false;
  const targets: Field[] = [];
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    const v = f.value;
    if (v === null) {
      dynamic = true;
      targets.push(f);
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      const opt = v.slice(1).toLowerCase().split(':')[0] ?? '';
      if ('recurse'.startsWith(opt)) recursive = true;
      else if (PS_PATH_PARAMS.some((p) => p.startsWith(opt) && opt.length >= 2) || opt === 'p') {
        const next = args[i + 1];
        if (next) targets.push(next);
        i++;
      } else if (
        ['filter', 'include', 'exclude', 'credential', 'stream'].some(
          (p) => p.startsWith(opt) && opt.length >= 2,
        )
      ) {
        i++;
      }
      continue;
    }
    targets.push(f);
  }
  const split: Field[] = [];
  for (const t of targets) {
    if (t.value !== null && t.win !== null && t.value.includes(',')) {
      for (const part of t.win.split(','))
        split.push({ ...t, value: part, win: part, pattern: part, prefix: part });
    } else {
      split.push(t);
    }
  }
  return { recursive, dynamic, targets: split };
}

const removeItem: CommandRule = {
  ids: ['hardline.remove-item-recursive'],
  applies: (n) => n === 'remove-item' || n === 'ri',
  check(args, env) {
    const d = removeItemArgs(windowsWords(args));
    if (d.recursive && d.targets.length === 0 && env.stdin.kind === 'pipe') {
      return {
        unknown: 'unanalyzable.dynamic-argument',
        detail: 'Remove-Item -Recurse of paths from the pipeline',
      };
    }
    return recursiveOnProtected(
      d.recursive,
      !d.recursive && d.dynamic,
      d.dynamic,
      d.targets,
      env,
      () => 'hardline.remove-item-recursive',
      'Remove-Item -Recurse',
      true,
    );
  },
};

const HKLM =
  /^(registry::|microsoft\.powershell\.core\\registry::)?(hklm|hkey_local_machine|hkcr|hkey_classes_root)(:|\\|\/|$)/i;

function isHklm(f: Field): boolean {
  const vals = [f.win, f.value].filter((v): v is string => v !== null);
  return vals.some((v) => HKLM.test(v.replace(/^\\\\[^\\]+\\/, '')) || /^(hklm|hkey_local_machine)/i.test(v));
}

const registry: CommandRule = {
  ids: ['hardline.registry-delete-hklm'],
  applies: (n) =>
    [
      'reg',
      'remove-item',
      'ri',
      'rm',
      'del',
      'erase',
      'rd',
      'rmdir',
      'remove-itemproperty',
      'rp',
      'clear-item',
      'cli',
      'clear-itemproperty',
      'clp',
    ].includes(n),
  check(args, _env, name) {
    if (name === 'reg') {
      const verb = args[0];
      if (verb === undefined) return null;
      if (verb.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'reg verb is not literal' };
      if (verb.value.toLowerCase() !== 'delete') return null;
      const key = args[1];
      if (key === undefined) return null;
      if (key.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'reg delete of a non-literal key' };
      return isHklm(key) ? { match: 'hardline.registry-delete-hklm', detail: 'reg delete HKLM' } : null;
    }
    const d = removeItemArgs(windowsWords(args));
    return d.targets.some(isHklm)
      ? { match: 'hardline.registry-delete-hklm', detail: `${name} HKLM:` }
      : null;
  },
};

const shadow: CommandRule = {
  ids: ['hardline.shadow-copy-delete'],
  applies: (n) => n === 'vssadmin' || n === 'wmic' || n === 'wbadmin',
  check(args, _env, name) {
    const words = args.map((a) => a.value?.toLowerCase() ?? '');
    const hit: Verdict = { match: 'hardline.shadow-copy-delete', detail: `${name} ${words.join(' ')}` };
    if (
      name === 'vssadmin' &&
      words.includes('delete') &&
      words.some((w) => w === 'shadows' || w === 'shadowstorage')
    )
      return hit;
    if (name === 'wmic' && words.includes('shadowcopy') && words.includes('delete')) return hit;
    if (
      name === 'wbadmin' &&
      words.includes('delete') &&
      words.some((w) => w === 'catalog' || w === 'systemstatebackup' || w === 'backup')
    )
      return hit;
    return null;
  },
};

/** Every command rule, in the order they are checked (the first match wins). */
export const COMMAND_RULES: readonly CommandRule[] = [
  rm,
  find,
  rsync,
  mv,
  mkfs,
  dd,
  partition,
  wipefs,
  shred,
  diskutil,
  format,
  diskpart,
  psDisk,
  recursiveChange('hardline.chmod-recursive-protected', ['chmod'], 'chmod -R'),
  recursiveChange('hardline.chown-recursive-protected', ['chown', 'chgrp'], 'chown -R'),
  shutdown,
  kill,
  git,
  windowsDel,
  removeItem,
  registry,
  shadow,
];

/** Applies every rule that inspects one of `names` and reports the verdicts to `env`. */
export function applyCommandRules(names: readonly string[], args: readonly Field[], env: CommandEnv): void {
  for (const rule of COMMAND_RULES) {
    const name = names.find((n) => rule.applies(n));
    if (name !== undefined) env.verdict(rule.check(args, env, name));
  }
}
