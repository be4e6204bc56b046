import { jsonPath } from './errors.ts';

const MAX_DEPTH = 256;
const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

class Scan {
  pos = 0;
  readonly problems: string[] = [];
  readonly path: (string | number)[] = [];

  constructor(readonly text: string) {}

  /** `line L, column C` of a character offset (both 1-based). */
  where(at = this.pos): string {
    let line = 1;
    let col = 1;
    for (let i = 0; i < at && i < this.text.length; i++) {
      if (this.text[i] === '\n') {
        line++;
        col = 1;
      } else col++;
    }
    return `line ${line}, column ${col}`;
  }

  found(): string {
    if (this.pos >= this.text.length) return 'the end of the file';
    const ch = this.text[this.pos] as string;
    const code = ch.charCodeAt(0);
    return code < 0x20 || code === 0x7f
      ? `control character U+${code.toString(16).padStart(4, '0')}`
      : JSON.stringify(ch);
  }

  fail(expected: string): never {
    throw new SyntaxError(`${this.where()}: expected ${expected}, found ${this.found()}`);
  }

  ws(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos] as string)) this.pos++;
  }

  value(depth: number): void {
    if (depth > MAX_DEPTH) throw new SyntaxError(`${this.where()}: nested deeper than ${MAX_DEPTH} levels`);
    this.ws();
    const ch = this.text[this.pos];
    if (ch === '{') return this.object(depth);
    if (ch === '[') return this.array(depth);
    if (ch === '"') return void this.string();
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) return this.number();
    for (const word of ['true', 'false', 'null']) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return;
      }
    }
    this.fail('a value (object, array, string, number, true, false or null)');
  }

  object(depth: number): void {
    this.pos++;
    const keys = new Set<string>();
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return;
    }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') this.fail('a double-quoted property name');
      const keyAt = this.pos;
      const key = this.string();
      if (keys.has(key)) {
        this.problems.push(
          `${jsonPath([...this.path, key])}: duplicate key ${JSON.stringify(key)} (${this.where(keyAt)}); a later copy would silently replace the earlier one`,
        );
      }
      keys.add(key);
      this.ws();
      if (this.text[this.pos] !== ':') this.fail('":" after the property name');
      this.pos++;
      this.path.push(key);
      this.value(depth + 1);
      this.path.pop();
      this.ws();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      if (this.text[this.pos] === '}') {
        this.pos++;
        return;
      }
      this.fail('"," or "}"');
    }
  }

  array(depth: number): void {
    this.pos++;
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return;
    }
    for (let i = 0; ; i++) {
      this.path.push(i);
      this.value(depth + 1);
      this.path.pop();
      this.ws();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      if (this.text[this.pos] === ']') {
        this.pos++;
        return;
      }
      this.fail('"," or "]"');
    }
  }

  string(): string {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const ch = this.text[this.pos];
      if (ch === undefined) this.fail("the closing '\"' of a string");
      const code = ch.charCodeAt(0);
      if (code < 0x20) this.fail('a character allowed inside a string (escape control characters)');
      if (ch === '\\') {
        const esc = this.text[this.pos + 1];
        if (esc === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.pos + 2, this.pos + 6))) {
            this.pos += 2;
            this.fail('four hex digits after \\u');
          }
          this.pos += 6;
          continue;
        }
        if (esc === undefined || !'"\\/bfnrt'.includes(esc)) {
          this.pos++;
          this.fail('a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
        }
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (ch === '"') return JSON.parse(this.text.slice(start, this.pos)) as string;
    }
  }

  number(): void {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (m === null || m[0] === '-') this.fail('a number');
    this.pos += m[0].length;
  }
}

/**
 * Parses config text as strict JSON. A syntax error is reported as `line L, column C: expected
 * …, found …` (never a bare character offset); a key given twice in one object is a problem
 * naming its JSON path (JSON.parse would keep the last copy silently, e.g. dropping a `rules`
 * list written earlier). Returns the value and the problems; throws `SyntaxError` on bad syntax.
 */
export function parseJsonText(text: string): { value: unknown; problems: string[] } {
  const body = text.startsWith('\ufeff') ? text.slice(1) : text;
  const scan = new Scan(body);
  scan.value(0);
  scan.ws();
  if (scan.pos < body.length) scan.fail('the end of the file after the top-level value');
  return { value: JSON.parse(body) as unknown, problems: scan.problems };
}
