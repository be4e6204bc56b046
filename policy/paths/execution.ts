/**
 * Execution-time re-check. A decision is made on the file system as it was; a tool runs on the
 * file system as it is. Tool executors call these right before touching a path so that a symlink
 * or directory swapped in after the decision cannot move the access out of its root.
 *
 * Remaining time-of-check/time-of-use windows, stated honestly:
 * - Between the re-check and the `open`, an intermediate directory can still be swapped. The
 *   open helpers close most of that window: they open with `O_NOFOLLOW` (the final component is
 *   never a symlink), then verify that the descriptor is the object now at the checked path
 *   (same device and inode, and on Linux the kernel's own path of the descriptor), re-check
 *   again, and only then hand out the descriptor or write through it. All further I/O goes
 *   through that verified descriptor, so later renames do not matter.
 * - A write open creates a missing file before it can be verified: if the swap wins that race,
 *   an empty file may be left outside the root (its contents are never written, and an existing
 *   file there is never truncated). `createParents` can likewise leave empty directories.
 * - Hard links are invisible to path canonicalization: a hard link inside a root to a file
 *   outside it is, to the kernel, a file inside the root. So are bind mounts.
 * - Windows has no `O_NOFOLLOW` in Node and no `/proc`: the final-component check there is an
 *   `lstat` just before the open, and verification relies on the device/inode comparison.
 * - Anything else running with the user's privileges (including an approved shell command) is
 *   not confined by this: the runtime is not a sandbox.
 */
import type { ReasonCode, RuleRef, Target } from '../decision.ts';
import type { PathAccess } from '../risk.ts';
import type { WorkspaceRoot } from '../roots.ts';
import type { ExecFs } from './fs.ts';
import type { SnotraPathGuard } from './guard.ts';
import type { PathRuleId } from './rules.ts';

/** A refusal at execution time. `code` is the OS error name when the OS refused. */
export interface ExecutionRefusal {
  readonly ok: false;
  readonly reason: ReasonCode;
  readonly rule: RuleRef;
  readonly message: string;
  readonly code?: string;
}

/** Outcome of `recheckAtExecution`. */
export type RecheckResult =
  { readonly ok: true; readonly path: string; readonly target: Target } | ExecutionRefusal;

/** Outcome of `openAtExecution`: a verified descriptor the caller must close. */
export type OpenAtExecutionResult =
  { readonly ok: true; readonly fd: number; readonly path: string } | ExecutionRefusal;

/** Outcome of `writeFileAtExecution`. */
export type WriteAtExecutionResult = { readonly ok: true; readonly path: string } | ExecutionRefusal;

function refusal(id: PathRuleId, message: string, code?: string): ExecutionRefusal {
  const base = {
    ok: false as const,
    reason: 'invalid_path' as const,
    rule: { id, source: 'roots' as const },
    message,
  };
  return code === undefined ? base : { ...base, code };
}

/**
 * Canonicalizes the decided target again against the current roots. Guarantees: `ok` only when
 * the input still resolves to exactly the decided path, that path is still not sensitive (nor
 * never-writable for a write), and a current root still grants `access`; otherwise the guard's
 * own denial (e.g. `outside_roots` after a swap to outside) or `invalid_path` with rule
 * `roots.changed-since-decision` when it now resolves elsewhere inside the roots.
 */
export function recheckAtExecution(
  decidedTarget: Target,
  access: PathAccess,
  roots: readonly WorkspaceRoot[],
  guard: SnotraPathGuard,
): RecheckResult {
  if (decidedTarget.resolved === null) {
    return refusal('roots.changed-since-decision', 'the decided target has no resolved path');
  }
  const now = guard.resolve(decidedTarget.argument, decidedTarget.input, access, roots);
  if (!now.ok) return { ok: false, reason: now.reason, rule: now.rule, message: now.message };
  if (now.target.resolved !== decidedTarget.resolved) {
    return refusal('roots.changed-since-decision', 'the path resolves elsewhere than when it was decided');
  }
  return { ok: true, path: now.target.resolved, target: now.target };
}

/** Options of `openAtExecution`. */
export interface OpenOptions {
  /** For writes: create missing parent directories of the checked path first. */
  readonly createParents?: boolean;
}

function sameObject(fs: ExecFs, fd: number, path: string): boolean {
  const byFd = fs.identityOfFd(fd);
  const byPath = fs.identityOfPath(path);
  if (byFd === null || byPath === null) return false;
  if (byFd.dev !== byPath.dev || byFd.ino !== byPath.ino) return false;
  const kernelPath = fs.pathOfFd(fd);
  return kernelPath === null || kernelPath === path;
}

function parentOf(guard: SnotraPathGuard, path: string): string | null {
  const parsed = guard.flavor.parse(path, { expandHome: false });
  if (parsed.kind !== 'absolute' || parsed.segments.length === 0) return null;
  return guard.flavor.format(parsed.anchor, parsed.segments.slice(0, -1));
}

/**
 * Re-checks the decided target and opens it (`read`: existing regular file; `write`: regular
 * file, created when missing, never truncated here). Guarantees: on `ok`, the descriptor refers
 * to a regular file that, after the open, was at the decided canonical path, inside a root
 * granting `access`, reached without any symlink; the final component was never followed as a
 * symlink. On refusal no descriptor stays open. See the module comment for the windows left.
 */
export function openAtExecution(
  decidedTarget: Target,
  access: PathAccess,
  roots: readonly WorkspaceRoot[],
  guard: SnotraPathGuard,
  fs: ExecFs,
  options: OpenOptions = {},
): OpenAtExecutionResult {
  const first = recheckAtExecution(decidedTarget, access, roots, guard);
  if (!first.ok) return first;
  const path = first.path;
  if (access === 'write' && options.createParents === true) {
    const parent = parentOf(guard, path);
    if (parent !== null && !fs.mkdirp(parent))
      return refusal('roots.io-failed', 'cannot create the parent directories');
  }
  const opened = fs.openNoFollow(path, access);
  if (!opened.ok) {
    if (opened.code === 'ELOOP' || opened.code === 'EMLINK') {
      return refusal('roots.open-mismatch', 'the final component became a symlink', opened.code);
    }
    return refusal('roots.io-failed', `the open failed (${opened.code})`, opened.code);
  }
  const fd = opened.fd;
  const close = (result: ExecutionRefusal): ExecutionRefusal => {
    fs.close(fd);
    return result;
  };
  if (fs.identityOfFd(fd)?.kind !== 'file')
    return close(refusal('roots.not-a-regular-file', 'not a regular file'));
  if (!sameObject(fs, fd, path)) {
    return close(refusal('roots.open-mismatch', 'the opened file is not the one at the checked path'));
  }
  const second = recheckAtExecution(decidedTarget, access, roots, guard);
  if (!second.ok) return close(second);
  return { ok: true, fd, path };
}

/**
 * Re-checks the decided target, opens it for writing as `openAtExecution` does, and replaces its
 * contents with `data` through the verified descriptor. Guarantees: the bytes are written only
 * to the regular file verified to be at the decided canonical path; an existing file elsewhere is
 * never truncated or written.
 */
export function writeFileAtExecution(
  decidedTarget: Target,
  roots: readonly WorkspaceRoot[],
  guard: SnotraPathGuard,
  fs: ExecFs,
  data: Uint8Array,
  options: OpenOptions = {},
): WriteAtExecutionResult {
  const opened = openAtExecution(decidedTarget, 'write', roots, guard, fs, options);
  if (!opened.ok) return opened;
  const written = fs.replaceContents(opened.fd, data);
  fs.close(opened.fd);
  return written ? { ok: true, path: opened.path } : refusal('roots.io-failed', 'the write failed');
}
