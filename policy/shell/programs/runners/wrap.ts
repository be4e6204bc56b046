/**
 * What unwrapping one layer of a command yields (WrapResult), the shape of a wrapper, and the
 * small helpers the wrappers, terminals, shells and containers share: skipping a wrapper's
 * options, joining literal words into shell code, dropping `NAME=value` operands.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import type { UnanalyzableRuleId } from '../../rules/ids.ts';
import { parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';

/** What unwrapping one layer yields. */
export type WrapResult =
  /**
   * Continue with these argvs (usually one; xargs -I may give several), optionally in another
   * env (stdin) and working directory (env -C, sudo -D, sudo -i).
   */
  | {
      readonly kind: 'exec';
      readonly argvs: readonly (readonly Field[])[];
      readonly env?: CommandEnv;
      readonly chdir?: Field;
    }
  /**
   * Literal shell code to analyze recursively. `sameShell` when it runs in the current shell
   * (eval, source: a `cd` in it persists); `fromStdin` when it was read from stdin (the nested
   * code then has nothing left to read).
   */
  | {
      readonly kind: 'code';
      readonly code: string;
      readonly sameShell?: boolean;
      readonly fromStdin?: boolean;
    }
  /** Nothing further runs (e.g. `sudo -l`, `command -v rm`). */
  | { readonly kind: 'done' }
  /** The inner command cannot be determined. */
  | { readonly kind: 'unknown'; readonly ruleId: UnanalyzableRuleId; readonly detail: string };

/** A wrapper: given the arguments after its name, the inner command. */
export type Wrapper = (args: readonly Field[], env: CommandEnv, name: string) => WrapResult;

/** The `sh` a wrapper runs when it starts a shell without a command (`sudo -s`, `at`). */
export const SH: Field = literalField('sh');

/** Runs `argv` (in `env` when given); nothing runs when it is empty. */
export function exec(argv: readonly Field[], env?: CommandEnv): WrapResult {
  if (argv.length === 0) return { kind: 'done' };
  return env ? { kind: 'exec', argvs: [argv], env } : { kind: 'exec', argvs: [argv] };
}

/** The inner command cannot be determined, for this reason. */
export function unknown(ruleId: UnanalyzableRuleId, detail: string): WrapResult {
  return { kind: 'unknown', ruleId, detail };
}

/**
 * Skips the wrapper's options (POSIX order: they end at the first operand), then `positionals`
 * fixed operands (timeout's duration, chroot's root), and returns the rest as the inner command.
 * A field that may split into several words in that area makes the inner command unknown.
 */
export function afterOptions(
  args: readonly Field[],
  spec: OptionSpec,
  positionals = 0,
  name = 'wrapper',
): { argv: readonly Field[]; parsed: ReturnType<typeof parseOptions> } | WrapResult {
  const parsed = parseOptions(args, { ...spec, stopAtOperand: true });
  const end = Math.min(args.length, parsed.rest + positionals + 1);
  for (let i = 0; i < end; i++) {
    if (args[i]?.splittable) {
      return unknown(
        'unanalyzable.dynamic-program',
        `${name}: a non-literal word may change the command it runs`,
      );
    }
  }
  return { argv: args.slice(parsed.rest + positionals), parsed };
}

/** True when afterOptions returned a result instead of the inner command. */
export function isWrap(x: unknown): x is WrapResult {
  return typeof x === 'object' && x !== null && 'kind' in x;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Drops leading `NAME=value` operands (sudo, env). */
export function dropAssignments(argv: readonly Field[]): readonly Field[] {
  let i = 0;
  while (i < argv.length) {
    const f = argv[i] as Field;
    if (f.value !== null ? ASSIGNMENT.test(f.value) : ASSIGNMENT.test(f.prefix)) i++;
    else break;
  }
  return argv.slice(i);
}

/** Shell code formed by joining literal words with spaces (watch, cmd /c, powershell -Command). */
export function joinCode(argv: readonly Field[], what: string): WrapResult {
  if (argv.length === 0) return { kind: 'done' };
  const words: string[] = [];
  for (const f of argv) {
    if (f.value === null) return unknown('unanalyzable.dynamic-code', `${what}: code is not literal`);
    words.push(f.value);
  }
  return { kind: 'code', code: words.join(' ') };
}
