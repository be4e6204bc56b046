/** Node-type sets and small accessors over tree-sitter-bash nodes shared by the walk. */
import type { Node } from 'web-tree-sitter';
import type { Field } from './field.ts';
import { wordFields } from './words.ts';

/** Statement node types (what a list, group or body is made of). */
export const STATEMENTS = new Set([
  'c_style_for_statement',
  'case_statement',
  'command',
  'compound_statement',
  'declaration_command',
  'for_statement',
  'function_definition',
  'if_statement',
  'list',
  'negated_command',
  'pipeline',
  'redirected_statement',
  'subshell',
  'test_command',
  'unset_command',
  'variable_assignment',
  'variable_assignments',
  'while_statement',
]);

/** Compound parts whose statements may or may not run. */
export const CONDITIONAL = new Set([
  'if_statement',
  'elif_clause',
  'else_clause',
  'while_statement',
  'for_statement',
  'c_style_for_statement',
  'case_statement',
  'case_item',
  'do_group',
]);

/** Redirection node types. */
export const REDIRECTS = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

/** The fields of several word nodes, in order. */
export function fieldsOf(nodes: readonly Node[]): Field[] {
  return nodes.flatMap((n) => wordFields(n));
}

/** The named children of a node (no nulls). */
export function namedChildren(node: Node): Node[] {
  return node.namedChildren.filter((c): c is Node => c !== null);
}

/** All children of a node, anonymous tokens included (no nulls). */
export function allChildren(node: Node): Node[] {
  return node.children.filter((c): c is Node => c !== null);
}
