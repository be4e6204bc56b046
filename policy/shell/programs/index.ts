/**
 * The known programs, one entry per name: what the shell analysis knows about a program is found
 * here — which of its arguments it reads and writes, the trees it walks, the command or code it
 * runs (as a wrapper, a code runner, a container runner, or through an option), the credential
 * stores it prints from, and the hardline rules that inspect it. Everything not in these tables
 * falls under the one fail-closed rule (fail-closed.ts): every argument that could name a file is
 * a probe.
 *
 * The tables themselves stay with the code that reads each kind of knowledge (files/, trees.ts,
 * runners/, credentials.ts, git-paths.ts, ../rules/); command.ts takes them from here, and
 * `programEntry(name)` gathers one name's rows from all of them.
 */
import { COMMAND_RULES } from '../rules/index.ts';
import type { CommandRule } from '../rules/kit.ts';
import { runtimeControl } from '../rules/runtime.ts';
import { CREDENTIAL_ROWS } from './credentials.ts';
import { COMMAND_HEADS, NO_PATH_PROGRAMS } from './fail-closed.ts';
import type { Collector } from './files/collector.ts';
import { COLLECTORS, PIPE_DELETERS } from './files/index.ts';
import { CODE_RUNNERS } from './runners/code-runners.ts';
import { CONTAINER_RUNNERS } from './runners/containers.ts';
import { OPTION_RUNNERS } from './runners/option-runners.ts';
import type { OptionRunner } from './runners/option-runners.ts';
import type { Wrapper } from './runners/wrap.ts';
import { WRAPPERS } from './runners/wrappers.ts';
import { TREE_ROWS } from './trees.ts';
import type { TreeRow } from './trees.ts';

export { CREDENTIAL_ROWS, credentialReads } from './credentials.ts';
export { COMMAND_HEADS, NO_PATH_PROGRAMS, probeArguments } from './fail-closed.ts';
export { COLLECTORS, collectFileArgs, hasFileTable } from './files/index.ts';
export { parseFind } from './find.ts';
export { analyzeGitConfigCommand, analyzeGitConfigs, parseGit } from './git.ts';
export { gitPaths } from './git-paths.ts';
export { programNames } from './names.ts';
export { CODE_RUNNERS } from './runners/code-runners.ts';
export { CONTAINER_RUNNERS } from './runners/containers.ts';
export { analyzeOptionRunners, OPTION_RUNNERS } from './runners/option-runners.ts';
export { WRAPPERS } from './runners/wrappers.ts';

/** Programs whose paths command.ts reads itself: find (-exec, -delete), fd (-x) and git (git-paths.ts). */
export const OWN_PATHS: ReadonlySet<string> = new Set(['find', 'gfind', 'fd', 'fdfind', 'git', 'hub']);

/** tar reads its mode from a bundled first word; its tree walk is trees.ts's own function. */
const TAR_TREES = new Set(['tar', 'gtar', 'bsdtar']);

/** The command or code a program runs, and the table it comes from. */
export interface ProgramRunner {
  /** wrappers (runners/wrappers.ts), code runners (shells, eval, inline code), containers. */
  readonly kind: 'wrapper' | 'code' | 'container';
  readonly run: Wrapper;
}

/** Everything the analysis knows about one program name (lower case, as programNames gives it). */
export interface ProgramEntry {
  readonly name: string;
  /**
   * How its path arguments are found: `runner` (the command or code it runs is analyzed instead,
   * and its own files, trees and credential rows are not consulted), `none` (it takes no
   * paths), `table` (files/ or command.ts says which it reads and writes), or `probed` (unknown:
   * every argument that could name a file is a probe, and a command head among them is analyzed
   * as a command).
   */
  readonly paths: 'none' | 'table' | 'runner' | 'probed';
  /** Which arguments it reads and writes (files/), or null. */
  readonly files: Collector | null;
  /** The directories it walks recursively (trees.ts): a row, `tar`, or null. */
  readonly trees: TreeRow | 'tar' | null;
  /** The command or code it runs, first of wrappers, code runners and containers, or null. */
  readonly runs: ProgramRunner | null;
  /** Commands or code given in its options (runners/option-runners.ts), or null. */
  readonly optionRunner: OptionRunner | null;
  /** The credential stores it can print a secret from (credentials.ts). */
  readonly credentialStores: readonly string[];
  /**
   * The hardline rules that inspect it, in the order they are checked (rules/index.ts). For a
   * runner only the runtime-control rule, which command.ts checks before unwrapping a launcher.
   */
  readonly rules: readonly CommandRule[];
  /** Met in the arguments of an unknown program, it starts a command that is analyzed too. */
  readonly commandHead: boolean;
  /** In PowerShell it deletes the paths piped into it (a caution). */
  readonly pipeDeletes: boolean;
}

function own<T>(table: Readonly<Record<string, T>>, name: string): T | null {
  return Object.hasOwn(table, name) ? (table[name] as T) : null;
}

function runnerOf(name: string): ProgramRunner | null {
  const wrapper = own(WRAPPERS, name);
  if (wrapper !== null) return { kind: 'wrapper', run: wrapper };
  const code = own(CODE_RUNNERS, name);
  if (code !== null) return { kind: 'code', run: code };
  const container = own(CONTAINER_RUNNERS, name);
  return container === null ? null : { kind: 'container', run: container };
}

/** The rules checked for a runner: runtime-control for launchers (node, npx, bun, deno). */
function launcherRules(name: string): readonly CommandRule[] {
  return runtimeControl.applies(name) ? [runtimeControl] : [];
}

/**
 * What the analysis knows about program `name`, gathered from every table. An unknown name gets
 * an entry too: `paths: 'probed'` and whatever hardline rules match it by pattern (`mkfs.ext4`).
 */
export function programEntry(name: string): ProgramEntry {
  const files = own(COLLECTORS, name);
  const runs = runnerOf(name);
  const noPaths = NO_PATH_PROGRAMS.has(name);
  const tabled = files !== null || OWN_PATHS.has(name);
  return Object.freeze({
    name,
    paths: runs !== null ? 'runner' : noPaths ? 'none' : tabled ? 'table' : 'probed',
    files,
    trees: TAR_TREES.has(name) ? 'tar' : own(TREE_ROWS, name),
    runs,
    optionRunner: own(OPTION_RUNNERS, name),
    credentialStores: CREDENTIAL_ROWS.filter((r) => r.names.includes(name)).map((r) => r.store),
    rules: runs === null ? COMMAND_RULES.filter((r) => r.applies(name)) : launcherRules(name),
    commandHead: COMMAND_HEADS.has(name),
    pipeDeletes: PIPE_DELETERS.has(name),
  });
}

/** Every program name some table lists, sorted. Rules that match by pattern add no names here. */
export const KNOWN_PROGRAMS: readonly string[] = Object.freeze(
  [
    ...new Set([
      ...NO_PATH_PROGRAMS,
      ...Object.keys(COLLECTORS),
      ...OWN_PATHS,
      ...Object.keys(TREE_ROWS),
      ...TAR_TREES,
      ...Object.keys(WRAPPERS),
      ...Object.keys(CODE_RUNNERS),
      ...Object.keys(CONTAINER_RUNNERS),
      ...Object.keys(OPTION_RUNNERS),
      ...CREDENTIAL_ROWS.flatMap((r) => r.names),
      ...COMMAND_HEADS,
      ...PIPE_DELETERS,
    ]),
  ].sort(),
);
