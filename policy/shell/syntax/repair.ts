/**
 * Text repairs before walking, where tree-sitter-bash and bash read the same text differently
 * without an ERROR node: `\\`+newline continuations (bash removes them, even inside a word) and
 * newlines a simple command swallowed after a pipeline or redirection (bash ends the command).
 */
import type { Node } from 'web-tree-sitter';
import { allChildren } from './nodes.ts';

/** Node types that hold literal text where `\` + newline is not a line continuation. */
const LITERAL_CONTEXT = new Set([
  'raw_string',
  'ansi_c_string',
  'comment',
  'heredoc_body',
  'heredoc_content',
]);

/** True when `needle` (a sticky regex) matches at a position not escaped by a backslash. */
export function hasUnescaped(text: string, needle: RegExp): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    needle.lastIndex = i;
    const m = needle.exec(text);
    if (m !== null && m.index === i) return true;
  }
  return false;
}

/**
 * Positions of `\` + newline line continuations outside literal contexts. tree-sitter-bash
 * treats them as token separators, bash removes them (so `r\<newline>m` is `rm`).
 */
export function continuationCuts(root: Node, text: string): number[] {
  const cuts: number[] = [];
  let from = 0;
  for (;;) {
    const p = text.indexOf('\\\n', from);
    if (p < 0) break;
    from = p + 2;
    let run = 0;
    for (let k = p; k >= 0 && text[k] === '\\'; k--) run++;
    if (run % 2 === 0) continue;
    let n: Node | null = root.descendantForIndex(p, p + 1);
    let literal = false;
    while (n !== null) {
      if (LITERAL_CONTEXT.has(n.type)) {
        literal = true;
        break;
      }
      n = n.parent;
    }
    if (!literal) cuts.push(p);
  }
  return cuts;
}

/** Statement nodes whose words must all be on one line (after continuations are folded). */
const ONE_LINE = new Set([
  'command',
  'declaration_command',
  'unset_command',
  'file_redirect',
  'herestring_redirect',
  'redirected_statement',
]);

/**
 * Positions where a simple command swallowed the next line: tree-sitter-bash sometimes reads
 * `a | b | c<newline>rm -rf / && d` as `c` with the arguments `rm -rf /` (no ERROR node). In
 * bash an unquoted newline between words always ends the command, so a `;` inserted at the end
 * of the word before it restores bash's reading. Returns the insertion points, ascending.
 */
export function swallowedNewlines(root: Node, text: string): number[] {
  const out: number[] = [];
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const children = allChildren(node);
    if (ONE_LINE.has(node.type)) {
      for (let i = 1; i < children.length; i++) {
        const prev = children[i - 1] as Node;
        const next = children[i] as Node;
        if (prev.type === 'heredoc_redirect') continue;
        if (text.slice(prev.endIndex, next.startIndex).includes('\n')) out.push(prev.endIndex);
      }
    }
    stack.push(...children.filter((c) => c.childCount > 0));
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

/**
 * The repaired text when the tree shows a continuation or a swallowed newline to fix, else
 * null (the tree can be walked as it is).
 */
export function repairText(root: Node, text: string): string | null {
  const cuts = continuationCuts(root, text);
  if (cuts.length > 0) {
    let out = '';
    let last = 0;
    for (const c of cuts) {
      out += text.slice(last, c);
      last = c + 2;
    }
    return out + text.slice(last);
  }
  const breaks = text.includes('\n') ? swallowedNewlines(root, text) : [];
  if (breaks.length > 0) {
    let out = '';
    let last = 0;
    for (const b of breaks) {
      out += text.slice(last, b) + ';';
      last = b;
    }
    return out + text.slice(last);
  }
  return null;
}
