/**
 * What one pipeline stage feeds the next: the exact text of a literal `echo`/`printf` (so
 * `echo 'ls' | sh` can be analyzed), the starting points of a `find` (for xargs), process ids
 * from pgrep/pidof/lsof -t, or nothing known.
 */
import type { Node } from 'web-tree-sitter';
import type { StdinSource } from '../effects/env.ts';
import { dynamicField, itemsOf, literalField } from './field.ts';
import { parseFind } from '../programs/find.ts';
import { fieldsOf, namedChildren, REDIRECTS } from './nodes.ts';
import { programNames } from '../programs/names.ts';
import { isPidCommand } from './words.ts';

/** Renders a literal printf format with %s/%% and simple escapes; null when it uses anything else. */
function renderPrintf(format: string, args: readonly string[]): string | null {
  if (/\\[^nt\\]/.test(format) || /%[^s%]/.test(format)) return null;
  const unescaped = format.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
  const slots = (unescaped.match(/%s/g) ?? []).length;
  let out = '';
  let i = 0;
  do {
    out += unescaped.replace(/%(s|%)/g, (_, c: string) => (c === '%' ? '%' : (args[i++] ?? '')));
  } while (slots > 0 && i < args.length);
  return out;
}

/** What `stage` writes into the pipe, as far as it is known statically. */
export function pipeSource(stage: Node): StdinSource {
  const opaque: StdinSource = { kind: 'pipe', code: null, items: null };
  if (stage.type !== 'command') return opaque;
  try {
    const words = namedChildren(stage).filter(
      (c) => c.type !== 'variable_assignment' && !REDIRECTS.has(c.type),
    );
    const fields = fieldsOf(words);
    const name = fields[0] ? programNames(fields[0])[0] : undefined;
    const args = fields.slice(1);
    if (stage.type === 'command' && isPidCommand(stage)) {
      return { kind: 'pipe', code: null, items: [dynamicField(true, true)] };
    }
    if (name === 'find') {
      const f = parseFind(args);
      return { kind: 'pipe', code: null, items: f.starts.length > 0 ? f.starts : [literalField('.')] };
    }
    if (args.some((a) => a.value === null || a.glob)) return opaque;
    const values = args.map((a) => a.value as string);
    if (name === 'echo') {
      let i = 0;
      let newline = true;
      while (/^-[neE]+$/.test(values[i] ?? '')) {
        if ((values[i] ?? '').includes('n')) newline = false;
        i++;
      }
      const text = values.slice(i).join(' ');
      if (text.includes('\\')) return opaque;
      return { kind: 'pipe', code: text + (newline ? '\n' : ''), items: itemsOf(text) };
    }
    if (name === 'printf') {
      const start = values[0] === '--' ? 1 : 0;
      const format = values[start];
      if (format === undefined || format.startsWith('-')) return opaque;
      const text = renderPrintf(format, values.slice(start + 1));
      return text === null ? opaque : { kind: 'pipe', code: text, items: itemsOf(text) };
    }
  } catch {
    return opaque;
  }
  return opaque;
}
