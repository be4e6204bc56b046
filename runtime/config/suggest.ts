/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short names. */
function distance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The known name closest to `name` (case-insensitive edit distance at most a third of its length,
 * at least 2), or null when nothing is close enough to be a likely typo.
 */
export function closestName(name: string, known: Iterable<string>): string | null {
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance && d <= limit) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** `; did you mean "shell"?` when a close known name exists, else the empty string. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const best = closestName(name, known);
  return best === null ? '' : `; did you mean ${JSON.stringify(best)}?`;
}
