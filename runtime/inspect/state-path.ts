/**
 * An XState state value as dotted paths: `'idle'` → `idle`, `{ running: 'thinking' }` →
 * `running.thinking`; parallel regions are listed in order, joined by `,`. Cheap: it walks the
 * value only (a few keys), never the context.
 */
export function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return '';
  // The common case, one region: walked without building arrays.
  let only: string | undefined;
  let count = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    only = key;
    if (++count > 1) break;
  }
  if (count === 1 && only !== undefined) {
    const rest = statePath((value as Record<string, unknown>)[only]);
    if (!rest.includes(',')) return rest === '' ? only : `${only}.${rest}`;
  }
  const parts: string[] = [];
  for (const [key, sub] of Object.entries(value as Record<string, unknown>)) {
    const rest = statePath(sub);
    parts.push(
      rest === ''
        ? key
        : rest
            .split(',')
            .map((p) => `${key}.${p}`)
            .join(','),
    );
  }
  return parts.join(',');
}
