import { escapeForTerminal, oneLine } from './escape.ts';

/** How many lines of a command's output a short result shows. */
export const OUTPUT_LINES = 3;

/** What a short result is made from: the call, what the model saw, and the diff shown at approval, if any. */
export interface CallResult {
  readonly tool: string;
  readonly args: unknown;
  readonly ok: boolean;
  /** The observation the model saw, as the feed carries it (JSON, possibly cut short). */
  readonly content: string;
  /** The unified diff of an approved file change (its approval card), when there was one. */
  readonly diff?: string | null;
}

/** The observation as an object; a cut one (the feed caps it) gives what can be read from its start. */
function parsed(content: string): Record<string, unknown> {
  try {
    const value = JSON.parse(content) as unknown;
    if (typeof value === 'object' && value !== null) return value as Record<string, unknown>;
  } catch {
    // Cut short: read the fields a short result needs from the text.
  }
  const out: Record<string, unknown> = {};
  const code = /"exitCode":(-?\d+|null)/.exec(content);
  if (code !== null) out.exitCode = code[1] === 'null' ? null : Number(code[1]);
  for (const key of ['stdout', 'stderr', 'message']) {
    const m = new RegExp(`"${key}":"((?:[^"\\\\]|\\\\.)*)`).exec(content);
    if (m === null) continue;
    try {
      out[key] = JSON.parse(`"${(m[1] as string).replace(/\\u?[0-9a-fA-F]{0,3}$|\\$/, '')}"`) as string;
    } catch {
      out[key] = '';
    }
  }
  return out;
}

function linesOf(text: string): string[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function countLines(text: unknown): number {
  return typeof text === 'string' && text.length > 0 ? linesOf(text).length : 0;
}

/** Lines added and removed by a unified diff (headers not counted). */
export function diffCounts(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+++') || l.startsWith('---')) continue;
    if (l.startsWith('+')) added++;
    else if (l.startsWith('-')) removed++;
  }
  return { added, removed };
}

/** The first lines of a command's output, indented, with how many more there were. */
function outputLines(text: string): string[] {
  const lines = linesOf(text);
  const shown = lines.slice(0, OUTPUT_LINES).map((l) => `    │ ${oneLine(l, 200)}`);
  if (lines.length > OUTPUT_LINES)
    shown.push(
      `    │ … ${lines.length - OUTPUT_LINES} more line${lines.length - OUTPUT_LINES === 1 ? '' : 's'}`,
    );
  return shown;
}

function pathOf(args: Record<string, unknown>, result: Record<string, unknown>): string {
  const p = typeof args.path === 'string' ? args.path : typeof result.path === 'string' ? result.path : '?';
  return oneLine(p, 200);
}

/**
 * The short result of a finished tool call, for a person (one line, plus the first lines of a
 * command's output): `exit 0` and what the command printed; `wrote NOTES.md (+12 −3)`;
 * `read src/a.ts (240 lines)`. Every value is escaped for the terminal. Null when the call's
 * feed line says enough already (a failure other than a command's is shown as before).
 */
export function resultLines(r: CallResult): string[] | null {
  const args = (r.args ?? {}) as Record<string, unknown>;
  const obj = parsed(r.content);
  const err = (typeof obj.error === 'object' && obj.error !== null ? obj.error : null) as Record<
    string,
    unknown
  > | null;
  if (r.tool === 'shell') {
    const result = r.ok ? obj : ((err?.details ?? obj) as Record<string, unknown>);
    const code = result.exitCode;
    if (!r.ok && code === undefined) return null;
    const head = `${r.ok ? '✓' : '✗'} exit ${code === null ? `by ${oneLine(String(result.signal ?? 'signal'), 20)}` : String(code)}`;
    const out = typeof result.stdout === 'string' && result.stdout.length > 0 ? result.stdout : '';
    const errText = typeof result.stderr === 'string' ? result.stderr : '';
    return [`  ${head}`, ...outputLines(out.length > 0 || r.ok ? out : errText)];
  }
  if (!r.ok) return null;
  switch (r.tool) {
    case 'write_file': {
      const path = pathOf(args, obj);
      if (typeof r.diff === 'string') {
        const { added, removed } = diffCounts(r.diff);
        return [`  ✓ wrote ${path} (+${added} −${removed})`];
      }
      const n = countLines(args.content);
      return [`  ✓ wrote ${path} (${obj.created === true ? `+${n}` : `${n} lines`})`];
    }
    case 'edit_file':
      return [`  ✓ edited ${pathOf(args, obj)} (+${countLines(args.new)} −${countLines(args.old)})`];
    case 'read_file': {
      const total = typeof obj.totalLines === 'number' ? obj.totalLines : null;
      const start = typeof obj.startLine === 'number' ? obj.startLine : 1;
      const end = typeof obj.endLine === 'number' ? obj.endLine : null;
      const whole = start === 1 && total !== null && (end === null || end >= total);
      const what = whole
        ? `${total} lines`
        : end === null
          ? 'no lines'
          : `lines ${start}–${end}${total === null ? '' : ` of ${total}`}`;
      return [`  ✓ read ${pathOf(args, obj)} (${what})`];
    }
    default: {
      const text = escapeForTerminal(r.content.slice(0, 120));
      return [`  ✓ ${oneLine(r.tool, 80)}: ${text}${r.content.length > 120 ? '…' : ''}`];
    }
  }
}
