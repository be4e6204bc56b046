/** Median and spread of a sample of numbers (for benchmark reports). */
export function summarize(samples: readonly number[]): {
  median: number;
  min: number;
  max: number;
  p99: number;
  n: number;
} {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { median: at(0.5), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN, p99: at(0.99), n: s.length };
}
