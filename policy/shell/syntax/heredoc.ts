/**
 * Here-document checks: where tree-sitter-bash and bash could disagree on where a body ends
 * (delimiter quoting, indented or trailing text on the end line, a body line equal to the
 * delimiter), the command is unanalyzable.
 */
import type { Node } from 'web-tree-sitter';
import { allChildren, namedChildren } from './nodes.ts';

/** True when the delimiter is quoted (`<<'EOF'`, `<<"EOF"`, `<<\\EOF`): the body is literal. */
export function isQuotedHeredoc(node: Node): boolean {
  const start = namedChildren(node).find((c) => c.type === 'heredoc_start')?.text ?? '';
  return /['"\\]/.test(start);
}

/** Why bash might end the here-document elsewhere than the tree says, or null. */
export function heredocProblem(node: Node, source: string): string | null {
  const children = namedChildren(node);
  const start = children.find((c) => c.type === 'heredoc_start')?.text ?? '';
  const end = children.find((c) => c.type === 'heredoc_end');
  const body = children.find((c) => c.type === 'heredoc_body');
  const delimiter = start.replace(/\\(.)/g, '$1').replace(/['"]/g, '');
  const stripTabs = allChildren(node).some((c) => c.type === '<<-');
  const norm = (line: string): string => (stripTabs ? line.replace(/^\t+/, '') : line);
  if (end === undefined || end.text !== delimiter) return 'a here-document without its exact end line';
  const lineStart = source.lastIndexOf('\n', end.startIndex - 1) + 1;
  const nl = source.indexOf('\n', end.endIndex);
  const line = source.slice(lineStart, nl < 0 ? source.length : nl);
  if (norm(line) !== delimiter) return 'a here-document end line that bash would not accept';
  if (body !== undefined && body.text.split('\n').some((l) => norm(l) === delimiter)) {
    return 'a here-document that bash would end earlier';
  }
  return null;
}
