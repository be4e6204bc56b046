/** Shared pieces of the hardline rules: the rule shape and path-target helpers. */
import type { CommandEnv, Verdict } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';
import type { HardlineRuleId } from './ids.ts';
import type { ProtectedClass } from '../effects/paths.ts';
import { classifyPosix, classifyWindows, hasUnknownWindowsVar } from '../effects/paths.ts';

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

/** The stricter of two protection classes (root > home > system). */
export function higher(a: ProtectedClass | null, b: ProtectedClass | null): ProtectedClass | null {
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

/** The strictest protection class among `fields`, and whether any is only known at run time. */
export function worst(
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
 * The shared shape of "recursive X of a protected path": literal recursion + protected target
 * matches; recursion that might be given by a non-literal word, or a target only known at run
 * time, is unknown.
 */
export function recursiveOnProtected(
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
