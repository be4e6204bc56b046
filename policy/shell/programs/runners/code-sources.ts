/**
 * Where a code runner's code comes from besides an option: its stdin (literal only) or a script
 * file (read, never one written earlier in the same command). Shared by the shells and the
 * inline interpreters.
 */
import type { CommandEnv, StdinSource } from '../../effects/env.ts';
import type { Field } from '../../syntax/field.ts';
import { isStreamPath } from '../../effects/paths.ts';
import type { WrapResult } from './wrap.ts';

/** An unknown result for code from a non-literal source. */
export function unknown(
  ruleId: 'unanalyzable.dynamic-code' | 'unanalyzable.shell-stdin',
  detail: string,
): WrapResult {
  return { kind: 'unknown', ruleId, detail };
}

/** What a code reader that reads its program from stdin gets: literal code, nothing, or unknown. */
export function stdinCode(stdin: StdinSource, who: string): WrapResult {
  switch (stdin.kind) {
    case 'inherit':
      return { kind: 'done' };
    case 'pipe':
    case 'herestring':
      if (stdin.code !== null) return { kind: 'code', code: stdin.code, fromStdin: true };
      return unknown('unanalyzable.shell-stdin', `${who} reads code from a non-literal ${stdin.kind}`);
    case 'opaque':
      return unknown(
        'unanalyzable.shell-stdin',
        `${who} reads code from a here-document, file, socket or descriptor`,
      );
  }
}

/** A script operand of a shell or `source`: reads it, or says why it cannot be followed. */
export function scriptFile(script: Field, env: CommandEnv, who: string): WrapResult {
  if (script.value === null) {
    if (script.proc) return unknown('unanalyzable.shell-stdin', `${who} runs a process substitution`);
    return {
      kind: 'unknown',
      ruleId: 'unanalyzable.dynamic-program',
      detail: `${who} runs a non-literal script`,
    };
  }
  if (isStreamPath(script.value))
    return unknown('unanalyzable.shell-stdin', `${who} runs code from ${script.value}`);
  if (env.wasWritten(script)) {
    return {
      kind: 'unknown',
      ruleId: 'unanalyzable.generated-script',
      detail: `${who} runs ${script.value}, written earlier in the same command`,
    };
  }
  env.read(script);
  return { kind: 'done' };
}
