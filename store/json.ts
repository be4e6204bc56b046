/**
 * JSON helpers for persisted payloads: canonical serialization (sorted keys, so equal data has
 * equal bytes and equal hashes) and a scan for prototype-polluting keys.
 */

/** Keys refused in every stored or loaded JSON document. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Serializes JSON-compatible data with object keys in code-point order and no whitespace.
 * `undefined` properties are dropped, as JSON.stringify does; non-finite numbers become null.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return 'null';
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const item = record[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * Finds the first forbidden key (`__proto__`, `constructor`, `prototype`) anywhere in parsed
 * JSON; returns its path (e.g. `$.snapshot.context.__proto__`) or null. Iterative, so a deeply
 * nested document cannot overflow the stack.
 */
export function findForbiddenKey(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '$']];
  while (stack.length > 0) {
    const [item, path] = stack.pop() as [unknown, string];
    if (item === null || typeof item !== 'object') continue;
    if (Array.isArray(item)) {
      item.forEach((child, i) => stack.push([child, `${path}[${i}]`]));
      continue;
    }
    for (const key of Object.keys(item)) {
      if (FORBIDDEN_KEYS.has(key)) return `${path}.${key}`;
      stack.push([(item as Record<string, unknown>)[key], `${path}.${key}`]);
    }
  }
  return null;
}

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
