import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { Target } from '../../policy/decision.ts';
import { unifiedDiff } from './unified-diff.ts';

/** What a human is shown of a call before deciding: the exact command, or the change to a file. */
export type ApprovalPreview =
  | { readonly kind: 'command'; readonly command: string; readonly cwd: string | null }
  | {
      readonly kind: 'diff';
      readonly path: string;
      /** A unified diff of the file as it is now against the file after the call. */
      readonly diff: string | null;
      readonly truncated: boolean;
      /** Why there is no diff (a file too large, not a regular file, an edit that would not apply). */
      readonly note: string | null;
    };

/** Files larger than this are not read for a diff. */
export const PREVIEW_FILE_MAX = 1024 * 1024;

type Read = { ok: true; text: string } | { ok: false; note: string };

/**
 * Reads a file for a diff without ever blocking or following a last-component symlink (the path
 * is the policy's canonical target): a missing file is empty; a FIFO, device, directory, binary
 * or oversized file is not read.
 */
function readForDiff(path: string): Read {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: true, text: '' };
    return { ok: false, note: `the current file cannot be read (${code ?? 'error'})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, note: 'the target is not a regular file' };
    if (st.size > PREVIEW_FILE_MAX)
      return { ok: false, note: `the file is too large to diff (${st.size} bytes)` };
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    const bytes = buf.subarray(0, off);
    if (bytes.includes(0)) return { ok: false, note: 'the file is binary' };
    return { ok: true, text: bytes.toString('utf8') };
  } finally {
    closeSync(fd);
  }
}

function pathTarget(targets: readonly Target[], argument: string): string | null {
  return targets.find((t) => t.argument === argument)?.resolved ?? null;
}

/**
 * The preview of a call awaiting approval: the exact command and where it runs for `shell`, a
 * unified diff for `write_file` / `edit_file` (computed from the file as it is now), null for
 * other tools. Every shown text passes `redact`; diffs are capped (unified-diff.ts).
 */
export function approvalPreview(
  tool: string,
  args: unknown,
  targets: readonly Target[],
  primaryRoot: string | null,
  redact: (text: string) => string,
): ApprovalPreview | null {
  const a = (args ?? {}) as Record<string, unknown>;
  if (tool === 'shell' && typeof a.command === 'string') {
    return { kind: 'command', command: redact(a.command), cwd: pathTarget(targets, 'cwd') ?? primaryRoot };
  }
  if (tool !== 'write_file' && tool !== 'edit_file') return null;
  const path = pathTarget(targets, 'path');
  if (path === null) return null;
  const none = (note: string) => ({ kind: 'diff' as const, path, diff: null, truncated: false, note });
  const current = readForDiff(path);
  if (!current.ok) return none(current.note);
  let after: string;
  if (tool === 'write_file') {
    if (typeof a.content !== 'string') return none('the content is not text');
    after = a.content;
  } else {
    if (typeof a.old !== 'string' || typeof a.new !== 'string' || a.old.length === 0)
      return none('the edit is not text');
    const at = current.text.indexOf(a.old);
    if (at < 0) return none('the text to replace is not in the file (the edit would fail)');
    if (current.text.indexOf(a.old, at + 1) >= 0)
      return none('the text to replace occurs more than once (the edit would fail)');
    after = current.text.slice(0, at) + a.new + current.text.slice(at + a.old.length);
  }
  const diff = unifiedDiff(path, redact(current.text), redact(after));
  return { kind: 'diff', path, diff: diff.text, truncated: diff.truncated, note: null };
}
