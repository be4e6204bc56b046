/**
 * File names pasted into shell code: `find . -exec sh -c 'echo {}' \;` and
 * `xargs -I{} sh -c 'echo {}'` splice each found name into the code a shell or interpreter runs,
 * so a file named `$(rm -rf ~)` runs as a command. The safe spelling passes the name as an
 * argument (`sh -c 'echo "$1"' _ {}`) and is not matched here.
 */
import type { Field } from '../../syntax/field.ts';
import { programNames } from '../names.ts';
import { CODE_RUNNERS } from './code-runners.ts';

/**
 * True when `argv` starts a code runner (a shell, eval, an interpreter; after any wrappers) and
 * a later word holds `token` inside a longer text: that text is code with a run-time name in it.
 */
export function pastesIntoCode(argv: readonly Field[], token: string): boolean {
  const runner = argv.findIndex((f) => programNames(f).some((n) => Object.hasOwn(CODE_RUNNERS, n)));
  if (runner < 0) return false;
  return argv.slice(runner + 1).some((f) => f.value !== null && f.value !== token && f.value.includes(token));
}
