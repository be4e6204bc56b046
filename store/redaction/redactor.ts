import { isBuiltInSensitive, isSensitiveKey, normalizeKey } from './keys.ts';
import { scrubCredentialShapes } from './patterns.ts';

/** Options of a Redactor. */
export interface RedactorOptions {
  /** Text that replaces a redacted value. Default `[REDACTED]`. */
  readonly censor?: string;
  /**
   * Extra keys whose values are always replaced, whatever they contain: message bodies, typed
   * browser input and the like (`body`, `text`, `typedText`…). Compared normalized, like the
   * built-in sensitive keys.
   */
  readonly markedKeys?: Iterable<string>;
  /**
   * Registered secrets shorter than this are ignored (default 4). A one- to three-character
   * "secret" would shred every log line and stored record (each `a` censored) while protecting
   * nothing: such a value is guessable anyway. Callers that hold one should not rely on it.
   */
  readonly minSecretLength?: number;
  /** Nesting depth beyond which content is replaced by `[Truncated]` (default 64). */
  readonly maxDepth?: number;
  /**
   * Whether values found under a built-in sensitive key are registered as secrets (default true),
   * so a tool result or a log line that repeats one in plain text is scrubbed too. Values under
   * `markedKeys` are censored but never learned (they are message bodies, not secrets).
   */
  readonly learnSensitiveValues?: boolean;
}

/** At most this many values are learned from sensitive keys (each makes the matcher longer). */
export const MAX_LEARNED_SECRETS = 256;

/**
 * Shortest value learned from a sensitive key. Shorter ones (`"none"`, `"basic"`, `"true"` under
 * `auth` or `token_type`) are censored under their key but not learned: scrubbing every later
 * `none` would shred tool results while protecting nothing a real credential needs.
 */
export const MIN_LEARNED_LENGTH = 8;

/** The default censor text. */
export const DEFAULT_CENSOR = '[REDACTED]';

const CIRCULAR = '[Circular]';
const TRUNCATED = '[Truncated]';

/**
 * The one place where secrets are removed from data before it is persisted, logged or shown.
 *
 * Guarantees, for every value passed to `redact`:
 * - values under a sensitive key (token, password, secret, authorization, cookie, api key,
 *   private key, credential, session key…, plus the marked keys) are replaced by the censor, and
 *   (unless turned off) a value of at least `MIN_LEARNED_LENGTH` characters under a built-in
 *   sensitive key is learned as a secret, so it is scrubbed wherever it appears later (up to
 *   `MAX_LEARNED_SECRETS` values);
 * - every registered secret (and its URL- and JSON-escaped forms) is replaced wherever it
 *   appears: whole values, inside longer strings, in object keys, in Error messages and stacks;
 * - common credential shapes in text (bearer tokens, URL passwords, `password=…`) are censored;
 * - the result is plain JSON-compatible data; the input is never mutated; cycles become
 *   `[Circular]`; binary data becomes `[binary N bytes]`.
 *
 * A registered secret that is itself part of the censor text cannot be told apart from it.
 */
export class Redactor {
  /** The text that replaces redacted values. */
  readonly censor: string;
  private readonly marked: Set<string>;
  private readonly minSecretLength: number;
  private readonly maxDepth: number;
  private readonly learn: boolean;
  private learned = 0;
  #generation = 0;
  private readonly secrets = new Set<string>();
  private matcher: RegExp | null = null;
  /** Per object key: its scrubbed form and whether its value is censored. Cleared on changes. */
  private readonly keyCache = new Map<string, { readonly out: string; readonly sensitive: boolean }>();

  constructor(options: RedactorOptions = {}) {
    this.censor = options.censor ?? DEFAULT_CENSOR;
    this.marked = new Set([...(options.markedKeys ?? [])].map(normalizeKey));
    this.minSecretLength = options.minSecretLength ?? 4;
    this.maxDepth = options.maxDepth ?? 64;
    this.learn = options.learnSensitiveValues ?? true;
  }

  /**
   * Grows each time what `redact` removes grows (a secret registered or learned, a key marked):
   * data redacted at one generation is redacted the same way at the same generation.
   */
  get generation(): number {
    return this.#generation;
  }

  /** How many secret forms are registered (including escaped variants). */
  get secretCount(): number {
    return this.secrets.size;
  }

  /**
   * Registers a secret value so it is scrubbed from everything redacted from now on. Returns
   * false (and registers nothing) when it is shorter than `minSecretLength`.
   */
  registerSecret(value: string): boolean {
    if (typeof value !== 'string' || value.length < this.minSecretLength) return false;
    if (this.secrets.has(value)) return true;
    const forms = [value, jsonEscaped(value), urlEscaped(value)];
    for (const form of forms) {
      if (form.length >= this.minSecretLength) this.secrets.add(form);
    }
    this.matcher = null;
    this.keyCache.clear();
    this.#generation++;
    return true;
  }

  /**
   * The length of the longest registered secret form (0 with none): a text that may still grow
   * can hide a secret only in its last `longestSecretLength - 1` characters.
   */
  get longestSecretLength(): number {
    let longest = 0;
    for (const form of this.secrets) longest = Math.max(longest, form.length);
    return longest;
  }

  /**
   * Where `redactString` would replace a registered secret in `text`: the spans, in order, not
   * overlapping, as `[start, end)` pairs. The values themselves are never returned.
   */
  secretSpans(text: string): Array<readonly [number, number]> {
    const matcher = text.length < this.minSecretLength ? null : this.secretMatcher();
    if (matcher === null) return [];
    const spans: Array<readonly [number, number]> = [];
    matcher.lastIndex = 0;
    for (const m of text.matchAll(matcher)) spans.push([m.index, m.index + m[0].length]);
    matcher.lastIndex = 0;
    return spans;
  }

  /** Marks one more key (normalized) whose values are always censored. */
  markKey(key: string): void {
    this.marked.add(normalizeKey(key));
    this.keyCache.clear();
    this.#generation++;
  }

  /** Whether `key` would be censored as a whole value. */
  isSensitiveKey(key: string): boolean {
    return isSensitiveKey(key, this.marked);
  }

  /** Scrubs registered secrets and credential shapes from one string. */
  redactString(text: string): string {
    // Every registered form is at least minSecretLength long: a shorter text holds none.
    const matcher = text.length < this.minSecretLength ? null : this.secretMatcher();
    let out = text;
    if (matcher) {
      out = out.replace(matcher, this.censor);
      // A replacement can bring two fragments together into a secret again; fail closed.
      matcher.lastIndex = 0;
      if (matcher.test(out)) out = this.censor;
      matcher.lastIndex = 0;
    }
    return scrubCredentialShapes(out, this.censor);
  }

  /** Returns a redacted, JSON-compatible deep copy of `value` (see the class guarantees). */
  redact(value: unknown): unknown {
    return this.walk(value, 0, []);
  }

  private secretMatcher(): RegExp | null {
    if (this.secrets.size === 0) return null;
    if (this.matcher === null) {
      const sorted = [...this.secrets].sort((a, b) => b.length - a.length).map(escapeRegExp);
      this.matcher = new RegExp(sorted.join('|'), 'g');
    }
    return this.matcher;
  }

  private walk(value: unknown, depth: number, path: object[]): unknown {
    switch (typeof value) {
      case 'string':
        return this.redactString(value);
      case 'number':
      case 'boolean':
      case 'undefined':
        return value;
      case 'bigint':
        return this.redactString(value.toString());
      case 'symbol':
      case 'function':
        return undefined;
    }
    if (value === null) return null;
    const obj = value as object;
    if (depth >= this.maxDepth) return TRUNCATED;
    if (path.includes(obj)) return CIRCULAR;
    path.push(obj);
    try {
      return this.walkObject(obj, depth + 1, path);
    } finally {
      path.pop();
    }
  }

  private walkObject(obj: object, depth: number, path: object[]): unknown {
    if (Array.isArray(obj)) return obj.map((item) => this.walk(item, depth, path));
    const proto: unknown = Object.getPrototypeOf(obj);
    if (
      (proto === Object.prototype || proto === null) &&
      typeof (obj as { toJSON?: unknown }).toJSON !== 'function'
    ) {
      return this.walkEntries(Object.entries(obj), depth, path);
    }
    if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? null : obj.toISOString();
    if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) return `[binary ${obj.byteLength} bytes]`;
    if (obj instanceof URL) return this.redactString(obj.href);
    if (obj instanceof Error) return this.walkEntries(errorEntries(obj), depth, path);
    if (obj instanceof Map) {
      return this.walkEntries(
        [...obj.entries()].map(([k, v]) => [String(k), v]),
        depth,
        path,
      );
    }
    if (obj instanceof Set) return [...obj].map((item) => this.walk(item, depth, path));
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      let json: unknown;
      try {
        json = toJSON.call(obj);
      } catch {
        return this.censor;
      }
      return json === obj ? this.walkEntries(Object.entries(obj), depth, path) : this.walk(json, depth, path);
    }
    return this.walkEntries(Object.entries(obj), depth, path);
  }

  private walkEntries(
    entries: Array<[string, unknown]>,
    depth: number,
    path: object[],
  ): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, item] of entries) {
      const info = this.keyInfo(key);
      let outKey = info.out;
      if (Object.prototype.hasOwnProperty.call(out, outKey)) {
        let n = 2;
        while (Object.prototype.hasOwnProperty.call(out, `${outKey}#${n}`)) n++;
        outKey = `${outKey}#${n}`;
      }
      if (info.sensitive && this.learn) this.learnValue(key, item, depth);
      const outValue = info.sensitive ? this.censor : this.walk(item, depth, path);
      if (outValue === undefined) continue;
      if (outKey === '__proto__') {
        Object.defineProperty(out, outKey, {
          value: outValue,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        out[outKey] = outValue;
      }
    }
    return out;
  }

  /** Registers the text leaves of a value found under a built-in sensitive key (not a marked one). */
  private learnValue(key: string, value: unknown, depth: number, seen = new Set<object>()): void {
    if (depth >= this.maxDepth || !isBuiltInSensitive(normalizeKey(key))) return;
    if (typeof value === 'number' || typeof value === 'bigint') value = String(value);
    if (typeof value === 'string') {
      // Already-censored data (a stored record redacted again) teaches nothing.
      if (value.includes(this.censor) || this.censor.includes(value) || this.secrets.has(value)) return;
      if (value.length < MIN_LEARNED_LENGTH || this.learned >= MAX_LEARNED_SECRETS) return;
      if (this.registerSecret(value)) this.learned++;
      return;
    }
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    const items: unknown[] = Array.isArray(value) ? value : Object.values(value);
    for (const item of items) this.learnValue(key, item, depth + 1, seen);
  }

  private keyInfo(key: string): { readonly out: string; readonly sensitive: boolean } {
    let info = this.keyCache.get(key);
    if (info === undefined) {
      info = { out: this.redactString(key), sensitive: this.isSensitiveKey(key) };
      if (this.keyCache.size >= 10_000) this.keyCache.clear();
      this.keyCache.set(key, info);
    }
    return info;
  }
}

/** The fields of an Error worth keeping: name, message, stack, cause, own enumerable props. */
function errorEntries(error: Error): Array<[string, unknown]> {
  const entries: Array<[string, unknown]> = [
    ['name', error.name],
    ['message', error.message],
  ];
  if (typeof error.stack === 'string') entries.push(['stack', error.stack]);
  if (error.cause !== undefined) entries.push(['cause', error.cause]);
  if (error instanceof AggregateError) entries.push(['errors', error.errors]);
  for (const entry of Object.entries(error)) {
    if (!entries.some(([k]) => k === entry[0])) entries.push(entry);
  }
  return entries;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function jsonEscaped(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

function urlEscaped(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value;
  }
}
