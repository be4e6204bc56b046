import { structuredPatch } from 'diff';

/**
 * Limits of a diff shown to a human deciding an approval. `maxChangedLines` bounds the work of
 * aligning the two texts: past that many removed plus added lines (when at most `maxOutputLines`
 * could be shown anyway), the changed middle is shown as one block instead.
 */
export const DIFF_LIMITS = {
  maxLines: 4000,
  maxOutputLines: 200,
  context: 3,
  maxChangedLines: 1000,
} as const;

/** A unified diff, capped; `truncated` when lines were left out. */
export interface UnifiedDiff {
  readonly text: string;
  readonly truncated: boolean;
}

interface Hunk {
  readonly oldStart: number;
  readonly oldLines: number;
  readonly newStart: number;
  readonly newLines: number;
  readonly lines: readonly string[];
}

function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The lines as text with a newline after each: a missing final newline is not shown as a change
 * (nor as jsdiff's "\ No newline at end of file" marker).
 */
function joinLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * One hunk that replaces everything between the lines both texts start and end with: a valid
 * diff, not a minimal one, for a change too large to align within DIFF_LIMITS.maxChangedLines.
 */
function blockHunk(a: readonly string[], b: readonly string[]): Hunk {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const before = a.slice(Math.max(0, head - DIFF_LIMITS.context), head);
  const after = a.slice(a.length - tail, a.length - tail + DIFF_LIMITS.context);
  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  const start = head - before.length + 1;
  return {
    oldStart: start,
    oldLines: before.length + removed.length + after.length,
    newStart: start,
    newLines: before.length + added.length + after.length,
    lines: [
      ...before.map((l) => ` ${l}`),
      ...removed.map((l) => `-${l}`),
      ...added.map((l) => `+${l}`),
      ...after.map((l) => ` ${l}`),
    ],
  };
}

/**
 * A unified diff (`--- path`, `+++ path`, `@@` hunks with three lines of context, removed lines
 * before added ones) from `before` to `after`, computed by jsdiff (Myers' algorithm: its work
 * grows with the size of the change, bounded by DIFF_LIMITS.maxChangedLines, and its memory with
 * the length of the texts). Inputs longer than DIFF_LIMITS.maxLines lines are not diffed (the text
 * says so); output past DIFF_LIMITS.maxOutputLines lines is cut and marked truncated.
 */
export function unifiedDiff(path: string, before: string, after: string): UnifiedDiff {
  const a = splitLines(before);
  const b = splitLines(after);
  const header = [`--- ${path}`, `+++ ${path}`];
  if (a.length > DIFF_LIMITS.maxLines || b.length > DIFF_LIMITS.maxLines) {
    return {
      text: [...header, `(not diffed: ${a.length} lines before, ${b.length} after)`].join('\n'),
      truncated: true,
    };
  }
  const patch = structuredPatch(path, path, joinLines(a), joinLines(b), undefined, undefined, {
    context: DIFF_LIMITS.context,
    maxEditLength: DIFF_LIMITS.maxChangedLines,
  });
  const hunks: readonly Hunk[] = patch === undefined ? [blockHunk(a, b)] : patch.hunks;
  if (hunks.length === 0) return { text: [...header, '(no change)'].join('\n'), truncated: false };
  const out = [...header];
  for (const h of hunks) {
    // The unified format's quirk (GNU diff, jsdiff's formatPatch): an empty side of a hunk names
    // the line before it.
    const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
    out.push(`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`, ...h.lines);
  }
  if (out.length > DIFF_LIMITS.maxOutputLines) {
    const more = out.length - DIFF_LIMITS.maxOutputLines;
    return {
      text: [...out.slice(0, DIFF_LIMITS.maxOutputLines), `… ${more} more diff lines`].join('\n'),
      truncated: true,
    };
  }
  return { text: out.join('\n'), truncated: false };
}
