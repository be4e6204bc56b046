/**
 * Which calls take a checkpoint, and of which roots: a call that can change a read-write root.
 * `write-local` tools (built-in or MCP, and any future one) checkpoint the read-write roots of
 * their path targets, or every read-write root in reach when a target has no root; `exec` tools
 * (`shell`, an MCP tool of that risk) and `git_query` checkpoint every read-write root in reach.
 * Read-only and external calls take none, without any I/O.
 */
import type { Decision } from '../../policy/decision.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';

/** Tools of risk `write-local` that change no file (they ask for authority). */
const NO_FILE_EFFECT: ReadonlySet<string> = new Set(['request_directory_access']);

/** Whether a call of `tool` with `decision` can change a root at all (no I/O: the hot path). */
export function mayChangeRoots(tool: string, decision: Pick<Decision, 'risk'>): boolean {
  if (NO_FILE_EFFECT.has(tool)) return false;
  return decision.risk === 'write-local' || decision.risk === 'exec' || tool === 'git_query';
}

/**
 * The read-write roots of `roots` a call of `tool` can change, none inside another one listed
 * (the outer root's checkpoint holds it).
 */
export function rootsToCheckpoint(
  tool: string,
  decision: Pick<Decision, 'risk' | 'targets'>,
  roots: readonly WorkspaceRoot[],
): WorkspaceRoot[] {
  if (!mayChangeRoots(tool, decision)) return [];
  const writable = roots.filter((r) => r.access === 'read-write');
  const targeted =
    decision.risk === 'write-local' &&
    decision.targets.length > 0 &&
    decision.targets.every((t) => t.root != null)
      ? writable.filter((r) => decision.targets.some((t) => t.root === r.id))
      : writable;
  const inside = (path: string, dir: string): boolean =>
    path !== dir && path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
  return targeted.filter((r) => !targeted.some((o) => o !== r && inside(r.path, o.path)));
}
