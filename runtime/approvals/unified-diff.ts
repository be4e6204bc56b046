/** Limits of a diff shown to a human deciding an approval. */
export const DIFF_LIMITS = { maxLines: 4000, maxOutputLines: 200, context: 3 } as const;

/** A unified diff, capped; `truncated` when lines were left out. */
export interface UnifiedDiff {
  readonly text: string;
  readonly truncated: boolean;
}

function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

type Op = { kind: ' ' | '-' | '+'; line: string; a: number; b: number };

/** The edit script between two line lists by longest common subsequence (bounded by DIFF_LIMITS). */
function editScript(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i] as Uint32Array;
    const next = lcs[i + 1] as Uint32Array;
    for (let j = m - 1; j >= 0; j--) {
      row[j] =
        a[i] === b[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i] as string, a: i++, b: j++ });
    } else if (i < n && (j >= m || (lcs[i + 1]?.[j] as number) >= (lcs[i]?.[j + 1] as number))) {
      ops.push({ kind: '-', line: a[i] as string, a: i++, b: j });
    } else {
      ops.push({ kind: '+', line: b[j] as string, a: i, b: j++ });
    }
  }
  return ops;
}

/**
 * A unified diff (`--- path`, `+++ path`, `@@` hunks with three lines of context) from `before`
 * to `after`. Inputs longer than DIFF_LIMITS.maxLines lines are not diffed (the text says so);
 * output past DIFF_LIMITS.maxOutputLines lines is cut and marked truncated.
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
  const ops = editScript(a, b);
  const changed = ops.map((o, k) => (o.kind === ' ' ? -1 : k)).filter((k) => k >= 0);
  if (changed.length === 0) return { text: [...header, '(no change)'].join('\n'), truncated: false };
  const out = [...header];
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, (changed[k] as number) - DIFF_LIMITS.context);
    let end = Math.min(ops.length - 1, (changed[k] as number) + DIFF_LIMITS.context);
    while (k + 1 < changed.length && (changed[k + 1] as number) - DIFF_LIMITS.context <= end + 1) {
      k++;
      end = Math.min(ops.length - 1, (changed[k] as number) + DIFF_LIMITS.context);
    }
    const hunk = ops.slice(start, end + 1);
    const first = hunk[0] as Op;
    const aLen = hunk.filter((o) => o.kind !== '+').length;
    const bLen = hunk.filter((o) => o.kind !== '-').length;
    out.push(
      `@@ -${aLen === 0 ? first.a : first.a + 1},${aLen} +${bLen === 0 ? first.b : first.b + 1},${bLen} @@`,
    );
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
    k++;
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
