/**
 * Reads and writes of commands that copy, move or change files: cp, install, mv (destination and
 * sources), chmod/chown/chgrp, dd, and the Windows deletes (del, erase, rd, Remove-Item).
 */
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { flagValue, flagValues, hasFlag, parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';
import { after } from './collector.ts';
import type { Collector } from './collector.ts';

/** cp / install / mv / ln: a destination (`-t DIR` or the last operand) and sources. */
export function copyLike(
  spec: OptionSpec,
  sourcesAre: 'read' | 'write' | 'none',
  content: boolean,
): Collector {
  return (args, env, name) => {
    const p = parseOptions(args, spec);
    const target = flagValue(p, 't', 'target-directory');
    if (name === 'install' && hasFlag(p, 'd', 'directory')) {
      p.operands.forEach((f) => env.write(f, false));
      return;
    }
    let sources: readonly Field[];
    if (target !== undefined) {
      if (target !== null) env.write(target, content);
      sources = p.operands;
    } else {
      if (p.operands.length < 2) return;
      env.write(p.operands[p.operands.length - 1] as Field, content);
      sources = p.operands.slice(0, -1);
    }
    if (sourcesAre === 'read') sources.forEach((f) => env.read(f));
    if (sourcesAre === 'write') sources.forEach((f) => env.write(f, false));
  };
}

/** Options of cp and mv. */
export const CP: OptionSpec = {
  shortValue: 'tS',
  longValue: ['target-directory', 'suffix'],
  longFlags: ['recursive', 'force', 'no-target-directory', 'archive', 'parents', 'verbose'],
};

/** chmod, chown, chgrp: the mode or owner comes first unless --reference. */
export const chmodLike: Collector = (args, env, name) => {
  const p = parseOptions(args, { longValue: ['reference', 'from'] });
  const modeAsOption =
    name === 'chmod' && [...p.flags.keys()].some((k) => k.length === 1 && 'rwxXstugoa'.includes(k));
  const targets = hasFlag(p, 'reference') || modeAsOption ? p.operands : p.operands.slice(1);
  flagValues(p, 'reference').forEach((f) => env.read(f));
  targets.forEach((f) => env.write(f, false));
};

/** dd, dcfldd: `of=` is written, `if=` read. */
export const dd: Collector = (args, env) => {
  for (const f of args) {
    if (f.value?.startsWith('of=')) env.write(after(f, 3), true);
    else if (f.value?.startsWith('if=')) env.read(after(f, 3));
  }
};
/** del, erase, rd, rmdir /s: every word that is not a switch is deleted. */
export const windowsTargets: Collector = (args, env) => {
  for (const f of args) {
    const v = f.value;
    if (v === null || (!/^\/[a-zA-Z?]/.test(v) && !(v.startsWith('-') && v.length > 1))) {
      env.write(f.win !== null ? { ...literalField(f.win), tilde: f.tilde } : f, false);
    }
  }
};

/** Remove-Item / ri: -Path values and plain words are deleted. */
export const removeItem: Collector = (args, env) => {
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    const v = f.value;
    if (v !== null && v.startsWith('-') && v.length > 1) {
      const opt = v.slice(1).toLowerCase();
      if (
        ['path', 'literalpath', 'lp', 'pspath'].some((p) => p.startsWith(opt) && opt.length >= 2) ||
        opt === 'p'
      ) {
        const next = args[i + 1];
        if (next)
          env.write(next.win !== null ? { ...literalField(next.win), tilde: next.tilde } : next, false);
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
    env.write(f.win !== null ? { ...literalField(f.win), tilde: f.tilde } : f, false);
  }
};
