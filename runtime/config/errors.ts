import type { z } from 'zod';
import { knownKeysAt } from './known-keys.ts';
import { didYouMean } from './suggest.ts';

/** A config file that cannot be used. `problems` name the JSON path and what was expected. */
export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`${file}: invalid config\n  ${problems.join('\n  ')}`, options);
    this.name = 'ConfigError';
  }
}

const SECRET_KEY = /(token|secret|password|passwd|credential|api_?key|authorization|cookie|private)/i;

/** A JSON path as `a.b[0].c`. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out === '' ? '(root)' : out;
}

function describe(value: unknown, path: readonly PropertyKey[]): string {
  // Never echo a value that sits under a secret-looking key: config errors reach terminals and logs.
  if (path.some((p) => typeof p === 'string' && SECRET_KEY.test(p))) return `a ${typeof value}`;
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/**
 * One readable line per zod issue: `agents.assistant.mode: expected "allow" | "ask" | "deny", got "yolo"`.
 * With the `schema` that was parsed, an unknown key gets a did-you-mean from the keys it accepts.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], schema?: z.ZodType): string[] {
  return issues.map((issue) => {
    const where = jsonPath(issue.path);
    const got =
      'input' in issue && issue.input !== undefined ? `, got ${describe(issue.input, issue.path)}` : '';
    switch (issue.code) {
      case 'invalid_value':
        return `${where}: expected ${issue.values.map((v) => JSON.stringify(v)).join(' | ')}${got}`;
      case 'invalid_type':
        return `${where}: expected ${issue.expected}${'input' in issue && issue.input === undefined ? ', but it is missing' : got}`;
      case 'unrecognized_keys': {
        const known = schema === undefined ? [] : knownKeysAt(schema, issue.path);
        const hint = bindAddressKeys(issue.path, issue.keys)
          ? '; the sidecar listens on 127.0.0.1 only, no other address can be configured'
          : issue.keys.length === 1
            ? didYouMean(issue.keys[0] as string, known)
            : '';
        return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}${hint}`;
      }
      default:
        return `${where}: ${issue.message}${got}`;
    }
  });
}

/** Keys that would choose the sidecar's address (refused: it binds 127.0.0.1 only, DESIGN.md §8). */
const BIND_KEYS = new Set(['host', 'hostname', 'address', 'bind', 'listen', 'interface']);

function bindAddressKeys(path: readonly PropertyKey[], keys: readonly string[]): boolean {
  return path.length === 1 && path[0] === 'sidecar' && keys.some((k) => BIND_KEYS.has(k.toLowerCase()));
}
