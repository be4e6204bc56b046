// How a budget reads in the app (Goals cards and the actor tree): "tokens 231/400",
// "cost $0.0123/$0.05", "model calls 3/∞". One place, so both views say it the same way.

/** A dollar amount: at most 6 decimals, no trailing zeros past the cents ($0.05, $0.0123). */
export function dollars(n: number): string {
  const fixed = (Math.round(n * 1e6) / 1e6).toFixed(6).replace(/0+$/, '');
  const [whole, frac = ''] = fixed.split('.');
  return `$${whole}.${frac.padEnd(2, '0')}`;
}

/** One budget as "name used/limit" (no limit: ∞); a cost in dollars. */
export function budgetText(name: string, used: number, limit: number | null): string {
  const show = (n: number | null) => (n === null ? '∞' : name === 'costUsd' ? dollars(n) : String(n));
  return `${name === 'costUsd' ? 'cost' : name} ${show(used)}/${show(limit)}`;
}
