/** The shape of a file-argument collector and the small helpers the collectors share. */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { hasFlag, parseOptions } from '../options.ts';
import type { OptionSpec, ParsedOptions } from '../options.ts';

/** Emits the reads and writes of one command's arguments. */
export type Collector = (args: readonly Field[], env: CommandEnv, name: string) => void;

/** Reads every operand. */
export function readAll(spec: OptionSpec = {}): Collector {
  return (args, env) => parseOptions(args, spec).operands.forEach((f) => env.read(f));
}

/** Writes every operand (`content`: bytes go into it). */
export function writeAll(spec: OptionSpec, content: boolean): Collector {
  return (args, env) => parseOptions(args, spec).operands.forEach((f) => env.write(f, content));
}

/** A field for the part of `f` after a literal prefix (`of=`, `@`, `name=@`). */
export function after(f: Field, prefixLength: number): Field {
  if (f.value === null) return f;
  return { ...literalField(f.value.slice(prefixLength)), tilde: f.value.slice(prefixLength).startsWith('~') };
}

/** Pattern-first commands (grep, rg, sed, awk, jq): the program comes first unless given by an option. */
export function patternFirst(p: ParsedOptions, ...programOptions: string[]): readonly Field[] {
  return hasFlag(p, ...programOptions) ? p.operands : p.operands.slice(1);
}
