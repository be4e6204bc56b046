/** Hardline rules for recursive deletes, moves and permission changes of protected paths. */
import type { Field } from '../syntax/field.ts';
import { isRemoteOperand } from '../programs/files/transfer.ts';
import { parseFind } from '../programs/find.ts';
import type { HardlineRuleId } from './ids.ts';
import { hasFlag, parseOptions, RM_OPTIONS, RSYNC_OPTIONS } from '../programs/options.ts';
import type { ProtectedClass } from '../effects/paths.ts';
import { programNames } from '../programs/names.ts';
import { recursiveOnProtected, targetClass, windowsWords, worst } from './kit.ts';
import type { CommandRule } from './kit.ts';

/**
 * Recursive deletes are hardline on `/`, homes (`~`, `$HOME`, `~user`, /home/x, /Users/x,
 * C:\Users\x), system directories (effects/paths.ts) and whole-directory globs of those (`/*`, `~/*`,
 * `/etc/*`). `rm -rf .` / `rm -rf *` are not: they stay inside the working directory, and the
 * engine checks every write against the roots (so `rm -rf ..` is denied there as outside_roots).
 */
const RM_IDS: Readonly<Record<ProtectedClass, HardlineRuleId>> = {
  root: 'hardline.rm-recursive-root',
  home: 'hardline.rm-recursive-home',
  system: 'hardline.rm-recursive-system',
};

/** Recursive rm/rimraf/srm of `/`, a home or a system directory (ids by class). */
export const rm: CommandRule = {
  ids: ['hardline.rm-recursive-root', 'hardline.rm-recursive-home', 'hardline.rm-recursive-system'],
  applies: (n) => n === 'rm' || n === 'rimraf' || n === 'srm',
  check(args, env, name) {
    const p = parseOptions(windowsWords(args), RM_OPTIONS);
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

/** find over a protected path with -delete or -exec of a deleting program. */
export const find: CommandRule = {
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

/** rsync --delete* into a protected local destination. */
export const rsync: CommandRule = {
  ids: ['hardline.rsync-delete-protected'],
  applies: (n) => n === 'rsync',
  check(args, env) {
    const p = parseOptions(args, RSYNC_OPTIONS);
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

/** mv of a protected path (literal sources only). */
export const mv: CommandRule = {
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

/** chmod/chown/chgrp -R on a protected path, as a rule with the given id. */
export const recursiveChange = (id: HardlineRuleId, names: readonly string[], what: string): CommandRule => ({
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
