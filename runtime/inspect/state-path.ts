/**
 * An XState state value as dotted paths: `'idle'` → `idle`, `{ running: 'thinking' }` →
 * `running.thinking`; parallel regions are listed in order, joined by `,`. Cheap: it walks the
 * value only (a few keys), never the context.
 */
export function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return '';
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
