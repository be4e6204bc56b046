/**
 * The parts of a statement that are not statements themselves: words (command and process
 * substitutions inside them are walked, text the grammar leaves unstructured is scanned),
 * redirections and here-documents, assignments and declarations. The statements (lists,
 * pipelines, commands, functions), nested code and the CommandEnv of a command are the Walker's
 * (walk.ts), which extends this class.
 */
import type { Node } from 'web-tree-sitter';
import { checkAssignment, isCodeLike } from '../command.ts';
import type { CwdScope } from '../effects/cwd.ts';
import type { CommandEnv, StdinSource } from '../effects/env.ts';
import type { Findings } from '../effects/findings.ts';
import { pathEffects } from '../effects/path-effects.ts';
import { literalField } from './field.ts';
import type { Field } from './field.ts';
import { heredocProblem, isQuotedHeredoc } from './heredoc.ts';
import { allChildren, fieldsOf, namedChildren, STATEMENTS } from './nodes.ts';
import type { BashParser } from './parser.ts';
import { hasUnescaped } from './repair.ts';
import type { WalkContext } from './walk-context.ts';
import { hasUnescapedBlank, wordFields } from './words.ts';

/** Node types whose text bash expands but the grammar may leave unstructured. */
const SCANNED = new Set(['regex', 'extglob_pattern', 'word', 'string_content', 'heredoc_content', 'number']);

/** Walks the words, redirections and assignments of statements; the statements are walk.ts's. */
export abstract class WordWalker {
  protected source = '';

  constructor(
    protected readonly parser: BashParser,
    protected readonly findings: Findings,
    protected readonly depth: number,
    protected scope: CwdScope,
  ) {}

  /** Walks one statement (walk.ts). */
  protected abstract visit(node: Node, ctx: WalkContext): void;

  /** Walks the statements under `node` in order (walk.ts). */
  protected abstract sequence(node: Node, ctx: WalkContext): void;

  /** Parses and walks `code` one level deeper (walk.ts). */
  protected abstract nested(code: string, ctx: WalkContext, sameShell: boolean, from?: CwdScope): void;

  /** What a command walked in `ctx` sees and where it reports (walk.ts). */
  protected abstract env(ctx: WalkContext, fixedScope?: CwdScope): CommandEnv;

  protected subshell(fn: () => void): void {
    const saved = this.scope;
    this.scope = saved.clone();
    try {
      fn();
    } finally {
      this.scope = saved;
    }
  }

  /**
   * Applies redirections: output targets are writes (a device target is hardline), input
   * sources set stdin. Returns the stdin they give and statements hung under here-documents.
   */
  protected redirects(
    nodes: readonly Node[],
    ctx: WalkContext,
  ): { stdin: StdinSource | null; continuations: Node[] } {
    let stdin: StdinSource | null = null;
    const continuations: Node[] = [];
    for (const r of nodes) {
      const fd = namedChildren(r).find((c) => c.type === 'file_descriptor')?.text ?? null;
      const forStdin = fd === null || fd === '0';
      if (r.type === 'file_redirect') {
        this.expr(r, ctx);
        const op = allChildren(r).find((c) => !c.isNamed)?.type ?? '';
        const dest = fieldsOf(r.childrenForFieldName('destination').filter((c): c is Node => c !== null));
        if (op === '<') {
          if (forStdin) stdin = { kind: 'opaque' };
          dest.forEach((d) => this.env(ctx).read(d));
        } else if (['>', '>>', '>|', '&>', '&>>'].includes(op)) {
          this.redirectWrite(dest);
        } else if (op === '>&' || op === '<&') {
          const dup = dest.every((d) => d.value !== null && /^(\d+-?|-)$/.test(d.value));
          if (!dup && op === '>&') this.redirectWrite(dest);
          if (op === '<&' && forStdin && !dest.every((d) => d.value === '0')) stdin = { kind: 'opaque' };
        } else if (op !== '>&-' && op !== '<&-') {
          this.findings.cannot('unanalyzable.parse-error', `unsupported redirection ${op}`);
        }
      } else if (r.type === 'herestring_redirect') {
        this.expr(r, ctx);
        const value = fieldsOf(namedChildren(r).filter((c) => c.type !== 'file_descriptor'));
        const code = value.length === 1 && value[0]?.value != null ? value[0].value + '\n' : null;
        if (forStdin) stdin = { kind: 'herestring', code };
      } else if (r.type === 'heredoc_redirect') {
        if (forStdin) stdin = { kind: 'opaque' };
        this.heredoc(r, ctx, continuations);
      }
    }
    return { stdin, continuations };
  }

  protected redirectWrite(fields: readonly Field[]): void {
    const effects = pathEffects(this.findings, () => this.scope);
    for (const f of fields) effects.redirect(f);
  }

  protected heredoc(node: Node, ctx: WalkContext, continuations: Node[]): void {
    const children = namedChildren(node);
    const body = children.find((c) => c.type === 'heredoc_body');
    const problem = heredocProblem(node, this.source);
    if (problem !== null) this.findings.cannot('unanalyzable.heredoc-delimiter', problem);
    const quoted = isQuotedHeredoc(node);
    if (body !== undefined) {
      if (!quoted) {
        if (body.childCount === 0) this.scan(body);
        else this.expr(body, ctx);
      }
    }
    for (const c of children) {
      if (c.type === 'file_redirect' || c.type === 'herestring_redirect' || c.type === 'heredoc_redirect') {
        const r = this.redirects([c], ctx);
        continuations.push(...r.continuations);
      } else if (STATEMENTS.has(c.type) || c.type === 'ERROR') {
        continuations.push(c);
      }
    }
  }

  protected assignment(node: Node, ctx: WalkContext): void {
    this.exprChildren(node, ctx);
    const nameNode = node.childForFieldName('name');
    const valueNode = node.childForFieldName('value');
    const name = nameNode?.type === 'variable_name' ? nameNode.text : null;
    if (name === 'HOME') this.scope.homeTainted = true;
    if (name === 'GLOBIGNORE')
      this.findings.needsHuman('caution.dynamic-path', 'GLOBIGNORE makes globs match dot files');
    if (name === 'CDPATH') this.scope.cdpathTainted = true;
    const values =
      valueNode === null
        ? []
        : valueNode.type === 'array'
          ? fieldsOf(namedChildren(valueNode))
          : wordFields(valueNode);
    if (values.some(isCodeLike)) {
      this.findings.cannot(
        'unanalyzable.indirect-evaluation',
        'a variable holds command-substitution syntax',
      );
    }
    if (name !== null) {
      const single = values.length === 1 ? (values[0] ?? null) : valueNode === null ? literalField('') : null;
      checkAssignment(name, single, this.env(ctx));
    }
  }

  protected declaration(node: Node, ctx: WalkContext): void {
    for (const c of namedChildren(node)) {
      if (c.type === 'variable_assignment') this.assignment(c, ctx);
      else {
        this.expr(c, ctx);
        if (c.type !== 'variable_name' && wordFields(c).some(isCodeLike)) {
          this.findings.cannot(
            'unanalyzable.indirect-evaluation',
            'a declaration argument holds command-substitution syntax',
          );
        }
      }
    }
  }

  protected codeLikeIn(node: Node, detail: string): void {
    const stack: Node[] = [node];
    while (stack.length > 0) {
      const n = stack.pop() as Node;
      if (n.type === 'raw_string' || n.type === 'string' || n.type === 'ansi_c_string') {
        if (wordFields(n).some(isCodeLike)) this.findings.cannot('unanalyzable.indirect-evaluation', detail);
        continue;
      }
      if (n.type === 'command_substitution' || n.type === 'process_substitution') continue;
      stack.push(...namedChildren(n));
    }
  }

  /** Records HOME / CDPATH rebinding by read, declare, printf -v, ... (tilde and cd then turn dynamic). */
  protected taint(argv: readonly Field[]): void {
    for (const f of argv.slice(1)) {
      const v = f.value ?? '';
      if (v === 'HOME' || v.startsWith('HOME=')) this.scope.homeTainted = true;
      if (v === 'CDPATH' || v.startsWith('CDPATH=')) this.scope.cdpathTainted = true;
    }
  }

  protected scan(node: Node): void {
    const text = node.text;
    // The pattern or replacement of `${PATH//:/ }` may hold blanks: one word of an expansion.
    const inExpansion = node.parent?.type === 'expansion';
    if (node.type === 'word' && !inExpansion && /[ \t\n]/.test(text) && hasUnescapedBlank(text)) {
      this.findings.cannot('unanalyzable.parse-error', 'the parser merged several words into one');
    }
    if ((text.includes('$(') || text.includes('`')) && hasUnescaped(text, /\$\(|`/y)) {
      this.findings.cannot('unanalyzable.hidden-substitution', `a command substitution inside ${node.type}`);
    }
  }

  /** Walks a non-statement subtree: substitutions are analyzed, unstructured text is scanned. */
  protected expr(node: Node, ctx: WalkContext): void {
    switch (node.type) {
      case 'command_substitution':
        this.commandSubstitution(node, ctx);
        return;
      case 'process_substitution': {
        const writeSide = node.text.startsWith('>(');
        const stdin: StdinSource = writeSide ? { kind: 'pipe', code: null, items: null } : ctx.stdin;
        this.subshell(() => this.sequence(node, { ...ctx, stdin, async: true, conditional: true }));
        return;
      }
      case 'comment':
      case 'raw_string':
      case 'ansi_c_string':
        return;
      case 'heredoc_redirect':
        this.heredoc(node, ctx, []);
        return;
      default:
        if (STATEMENTS.has(node.type) || node.type === 'ERROR') {
          this.visit(node, ctx);
          return;
        }
        if (SCANNED.has(node.type) && node.childCount === 0) this.scan(node);
        this.exprChildren(node, ctx);
    }
  }

  protected exprChildren(node: Node, ctx: WalkContext): void {
    for (const c of allChildren(node)) if (c.isNamed) this.expr(c, ctx);
  }

  protected commandSubstitution(node: Node, ctx: WalkContext): void {
    const inner: WalkContext = { ...ctx, conditional: true };
    if (node.firstChild?.type === '`') {
      const text = node.text;
      const body = text.slice(1, text.endsWith('`') && text.length > 1 ? -1 : undefined);
      if (body.includes('\\')) {
        let inString = false;
        for (let p = node.parent; p !== null; p = p.parent) if (p.type === 'string') inString = true;
        const unescaped = body.replace(inString ? /\\([\\`$"])/g : /\\([\\`$])/g, '$1');
        this.nested(unescaped, inner, false);
        return;
      }
    }
    this.subshell(() => this.sequence(node, inner));
  }
}
