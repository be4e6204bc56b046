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
 * nested document cannot overflow the stack. Each object or array met is recorded with its
 * parent and its key, and a path is spelled out only for the key found (this runs on every
 * stored snapshot, most of which have none).
 */
export function findForbiddenKey(value: unknown): string | null {
  const items: object[] = [];
  const parents: number[] = [];
  const names: Array<string | number> = [];
  const stack: number[] = [];
  const visit = (item: unknown, parent: number, name: string | number): void => {
    if (item === null || typeof item !== 'object') return;
    items.push(item);
    parents.push(parent);
    names.push(name);
    stack.push(items.length - 1);
  };
  visit(value, -1, '');
  while (stack.length > 0) {
    const at = stack.pop() as number;
    const item = items[at] as object;
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) visit(item[i], at, i);
      continue;
    }
    for (const key of Object.keys(item)) {
      if (FORBIDDEN_KEYS.has(key)) return `${pathOf(at, parents, names)}.${key}`;
      visit((item as Record<string, unknown>)[key], at, key);
    }
  }
  return null;
}

/** The path of the recorded item `at`: `$`, then `.key` or `[index]` for each step down. */
function pathOf(at: number, parents: readonly number[], names: ReadonlyArray<string | number>): string {
  const steps: string[] = [];
  for (let i = at; i > 0; i = parents[i] as number) {
    const name = names[i] as string | number;
    steps.push(typeof name === 'number' ? `[${name}]` : `.${name}`);
  }
  return `$${steps.reverse().join('')}`;
}

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
