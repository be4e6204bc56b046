/** The context a statement is walked in, and how deep nested code may go. */
import type { StdinSource } from '../effects/env.ts';

/** Most nested parses (sh -c inside eval inside backticks ...) before the command is unanalyzable. */
export const MAX_DEPTH = 8;

/** The context a statement runs in. */
export interface WalkContext {
  readonly stdin: StdinSource;
  /** Names of the functions whose body encloses the statement. */
  readonly funcs: readonly string[];
  /** True in a pipeline of several stages or in the background. */
  readonly async: boolean;
  /** True when the statement may or may not run (a cd then only adds a possible cwd). */
  readonly conditional: boolean;
}

/** The context of a command string at the top. */
export const TOP: WalkContext = { stdin: { kind: 'inherit' }, funcs: [], async: false, conditional: false };
