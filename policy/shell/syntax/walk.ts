/**
 * The walk over a bash syntax tree: every simple command in lists, pipelines, `&`, subshells,
 * groups, loops, conditionals, functions, command and process substitutions (also inside
 * strings, here-documents, redirections and expansions) is analyzed with its context (stdin,
 * background, enclosing functions, working directory). Literal code in `sh -c`, `eval`, ... and
 * backtick bodies is parsed again, one level deeper, up to MAX_DEPTH.
 */
import type { Node } from 'web-tree-sitter';
import { analyzeArgv, checkAssignment, isCodeLike } from '../command.ts';
import { CwdScope } from '../effects/cwd.ts';
import type { CwdEntry } from '../effects/cwd.ts';
import type { CommandEnv, StdinSource, Verdict } from '../effects/env.ts';
import { literalField } from './field.ts';
import type { Field } from './field.ts';
import { Findings } from '../effects/findings.ts';
import { heredocProblem, isQuotedHeredoc } from './heredoc.ts';
import { allChildren, CONDITIONAL, fieldsOf, namedChildren, REDIRECTS, STATEMENTS } from './nodes.ts';
import type { BashParser } from './parser.ts';
import { pathEffects } from '../effects/path-effects.ts';
import { pipeSource } from './pipes.ts';
import { hasUnescaped, repairText } from './repair.ts';
import { hasUnescapedBlank, wordFields } from './words.ts';

/** Node types whose text bash expands but the grammar may leave unstructured. */
const SCANNED = new Set(['regex', 'extglob_pattern', 'word', 'string_content', 'heredoc_content', 'number']);

/** Commands trusted to print process ids only (see words.ts isPidCommand). */
const PID_COMMANDS = new Set(['pgrep', 'pidof', 'lsof']);

/** Most nested parses (sh -c inside eval inside backticks ...) before the command is unanalyzable. */
export const MAX_DEPTH = 8;

/** The context a statement runs in. */
export interface WalkContext {
  readonly stdin: StdinSource;
  /** Names of the functions whose body encloses the statement. */
  readonly funcs: readonly string[];
  /** True in a pipeline of several stages or in the background. */
  readonly async: boolean;
  /** True when the statement may or may not run (a cd then only adds a possible cwd). */
  readonly conditional: boolean;
}

/** The context of a command string at the top. */
export const TOP: WalkContext = { stdin: { kind: 'inherit' }, funcs: [], async: false, conditional: false };

/** Walks one parsed command string (or nested code) and reports to shared findings. */
export class Walker {
  private source = '';

  constructor(
    private readonly parser: BashParser,
    private readonly findings: Findings,
    private readonly depth: number,
    private scope: CwdScope,
  ) {}

  /** Parses and walks `code` (line continuations folded first, as bash does). */
  run(code: string, ctx: WalkContext): void {
    // bash reads a backslash at the very end of the input as itself (`dir C:\`).
    let text = /(^|[^\\])(\\\\)*\\$/.test(code) ? code + '\\' : code;
    for (let attempt = 0; attempt < 4; attempt++) {
      let again: string | null = null;
      const parsed = this.parser.withTree(text, (root) => {
        again = repairText(root, text);
        if (again !== null) return true;
        this.source = text;
        if (root.hasError) this.findings.cannot('unanalyzable.parse-error', 'the command has a syntax error');
        this.visit(root, ctx);
        return true;
      });
      if (parsed === null) {
        this.findings.cannot('unanalyzable.parse-error', 'the parser produced no tree');
        return;
      }
      if (again === null) return;
      text = again;
    }
    this.findings.cannot('unanalyzable.parse-error', 'line continuations could not be folded');
  }

  private nested(code: string, ctx: WalkContext, sameShell: boolean, from: CwdScope = this.scope): void {
    if (this.depth + 1 > MAX_DEPTH) {
      this.findings.cannot('unanalyzable.depth-exceeded', `nested code deeper than ${MAX_DEPTH} levels`);
      return;
    }
    const scope = sameShell ? from : from.clone();
    new Walker(this.parser, this.findings, this.depth + 1, scope).run(code, ctx);
  }

  private subshell(fn: () => void): void {
    const saved = this.scope;
    this.scope = saved.clone();
    try {
      fn();
    } finally {
      this.scope = saved;
    }
  }

  private visit(node: Node, ctx: WalkContext): void {
    switch (node.type) {
      case 'program':
      case 'compound_statement':
      case 'negated_command':
        this.sequence(node, ctx);
        return;
      case 'subshell':
        this.subshell(() => this.sequence(node, ctx));
        return;
      case 'list':
        this.list(node, ctx);
        return;
      case 'pipeline':
        this.pipeline(
          namedChildren(node).filter((c) => STATEMENTS.has(c.type) || c.type === 'ERROR'),
          ctx,
        );
        return;
      case 'command':
        this.command(node, ctx);
        return;
      case 'redirected_statement':
        this.redirected(node, ctx);
        return;
      case 'function_definition':
        this.functionDefinition(node, ctx);
        return;
      case 'test_command':
        this.codeLikeIn(node, 'a test may evaluate a subscript held in a literal');
        this.exprChildren(node, ctx);
        return;
      case 'declaration_command':
      case 'unset_command':
      case 'variable_assignments':
        this.declaration(node, ctx);
        return;
      case 'variable_assignment':
        this.assignment(node, ctx);
        return;
      case 'comment':
        return;
      case 'ERROR':
        this.findings.cannot('unanalyzable.parse-error', 'the command has a syntax error');
        this.sequence(node, ctx);
        return;
      default:
        if (CONDITIONAL.has(node.type)) this.sequence(node, { ...ctx, conditional: true });
        else this.sequence(node, ctx);
    }
  }

  /** Statements in order; a statement followed by `&` runs in the background (a subshell). */
  private sequence(node: Node, ctx: WalkContext): void {
    const children = allChildren(node);
    children.forEach((child, i) => {
      if (!child.isNamed) return;
      if (child.type === 'comment') return;
      if (STATEMENTS.has(child.type) || child.type === 'ERROR' || CONDITIONAL.has(child.type)) {
        const background = children[i + 1]?.type === '&';
        if (background) this.subshell(() => this.visit(child, { ...ctx, async: true, conditional: true }));
        else {
          // A cd may fail and the next statement still runs: it may see the old cwd too.
          const before = this.scope.snapshot();
          this.visit(child, ctx);
          this.scope.include(before);
        }
      } else if (REDIRECTS.has(child.type)) {
        this.redirects([child], ctx);
      } else {
        this.expr(child, ctx);
      }
    });
  }

  /**
   * `a && b` runs b only when a succeeded: b sees the cwd a's cd leaves (bash's `cd x && cmd`).
   * `a || b` runs b when a failed: b sees the cwd before or after a. After the list every cwd
   * seen on the way is possible. Nested lists are one chain, evaluated left to right as bash does.
   */
  private list(node: Node, ctx: WalkContext, lastRedirects?: readonly Node[]): void {
    const chain: { op: string | null; node: Node }[] = [];
    const flatten = (n: Node, first: string | null): void => {
      let op = first;
      for (const child of allChildren(n)) {
        if (!child.isNamed) {
          if (child.type === '&&' || child.type === '||') op = child.type;
          continue;
        }
        if (child.type === 'comment') continue;
        if (child.type === 'list') flatten(child, op);
        else chain.push({ op, node: child });
        op = null;
      }
    };
    flatten(node, null);
    const seen: CwdEntry[][] = [this.scope.snapshot()];
    chain.forEach(({ op, node: child }, i) => {
      let childCtx = ctx;
      if (op === '||') {
        for (const entries of seen) this.scope.include(entries);
        childCtx = { ...ctx, conditional: true };
      }
      // A redirection the grammar hung on the whole list belongs to its last command.
      if (lastRedirects !== undefined && i === chain.length - 1)
        this.withRedirects(child, lastRedirects, childCtx);
      else this.visit(child, childCtx);
      seen.push(this.scope.snapshot());
    });
    for (const entries of seen) this.scope.include(entries);
  }

  private pipeline(
    stages: readonly Node[],
    ctx: WalkContext,
    firstStdin?: StdinSource,
    lastRedirects?: readonly Node[],
  ): void {
    stages.forEach((stage, i) => {
      const prev = stages[i - 1];
      const stdin = i === 0 ? (firstStdin ?? ctx.stdin) : prev ? pipeSource(prev) : ctx.stdin;
      const stageCtx = { ...ctx, stdin, async: stages.length > 1 || ctx.async, conditional: true };
      this.subshell(() => {
        if (lastRedirects !== undefined && i === stages.length - 1)
          this.withRedirects(stage, lastRedirects, stageCtx);
        else this.visit(stage, stageCtx);
      });
    });
  }

  /** A simple command: assignments, substitutions in its words, redirections, then the command itself. */
  private command(node: Node, ctx: WalkContext): void {
    const words: Node[] = [];
    const redirects: Node[] = [];
    for (const child of namedChildren(node)) {
      if (child.type === 'variable_assignment') this.assignment(child, ctx);
      else if (REDIRECTS.has(child.type)) redirects.push(child);
      else if (STATEMENTS.has(child.type)) this.visit(child, ctx);
      else if (child.type !== 'comment') words.push(child);
    }
    for (const w of words) this.expr(w, ctx);
    const r = this.redirects(redirects, ctx);
    const argv = fieldsOf(words);
    this.taint(argv);
    const effective = r.stdin ?? ctx.stdin;
    if (argv.length === 1 && argv[0]?.value === 'exec' && effective.kind !== 'inherit') {
      this.scope.execStdin = effective;
    }
    const env = this.env({ ...ctx, stdin: r.stdin ?? ctx.stdin });
    analyzeArgv(argv, env);
    this.continuations(r.continuations, node, ctx);
  }

  private redirected(node: Node, ctx: WalkContext): void {
    const body = node.childForFieldName('body');
    const redirects = namedChildren(node).filter((c) => REDIRECTS.has(c.type));
    for (const c of namedChildren(node)) {
      if (!REDIRECTS.has(c.type) && c.id !== body?.id) this.expr(c, ctx);
    }
    if (body !== null) this.withRedirects(body, redirects, ctx);
    else this.redirects(redirects, ctx); // `> file` with no command word still truncates file.
  }

  /**
   * Runs `body` with `redirects`. The grammar attaches a trailing redirection to a whole list or
   * pipeline (`cd /dev && echo x > sda`); bash attaches it to the last command, so it is carried
   * down to the last statement (and sees the cwd the list leaves).
   */
  private withRedirects(body: Node, redirects: readonly Node[], ctx: WalkContext): void {
    if (body.type === 'list') {
      this.list(body, ctx, redirects);
      return;
    }
    if (body.type === 'pipeline') {
      const stages = namedChildren(body).filter((c) => STATEMENTS.has(c.type) || c.type === 'ERROR');
      this.pipeline(stages, ctx, undefined, redirects);
      return;
    }
    const r = this.redirects(redirects, ctx);
    this.visit(body, { ...ctx, stdin: r.stdin ?? ctx.stdin });
    this.continuations(r.continuations, body, ctx);
  }

  /** Statements the grammar hangs under a here-document (`cat <<EOF | sh`, `cat <<EOF && x`). */
  private continuations(nodes: readonly Node[], source: Node | null, ctx: WalkContext): void {
    for (const c of nodes) {
      if (c.type === 'pipeline') {
        const stages = namedChildren(c).filter((s) => STATEMENTS.has(s.type) || s.type === 'ERROR');
        const first = source ? pipeSource(source) : ({ kind: 'pipe', code: null, items: null } as const);
        this.pipeline(stages, { ...ctx, async: true }, first);
      } else {
        this.visit(c, { ...ctx, conditional: true });
      }
    }
  }

  /**
   * Applies redirections: output targets are writes (a device target is hardline), input
   * sources set stdin. Returns the stdin they give and statements hung under here-documents.
   */
  private redirects(
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

  private redirectWrite(fields: readonly Field[]): void {
    const effects = pathEffects(this.findings, () => this.scope);
    for (const f of fields) effects.redirect(f);
  }

  private heredoc(node: Node, ctx: WalkContext, continuations: Node[]): void {
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

  private functionDefinition(node: Node, ctx: WalkContext): void {
    const nameNode = node.childForFieldName('name');
    const name = nameNode ? (wordFields(nameNode)[0]?.value ?? null) : null;
    if (name !== null && PID_COMMANDS.has(name)) {
      // `kill $(pgrep x)` is trusted to kill positive pids only; a redefined pgrep breaks that.
      this.findings.cannot('unanalyzable.dynamic-program', `a function redefines ${name}`);
    }
    const body = node.childForFieldName('body');
    const inner: WalkContext = {
      ...ctx,
      funcs: name === null ? ctx.funcs : [...ctx.funcs, name.toLowerCase()],
      conditional: true,
    };
    if (body !== null) this.visit(body, inner);
    this.redirects(
      node.childrenForFieldName('redirect').filter((c): c is Node => c !== null),
      ctx,
    );
  }

  private assignment(node: Node, ctx: WalkContext): void {
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

  private declaration(node: Node, ctx: WalkContext): void {
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

  private codeLikeIn(node: Node, detail: string): void {
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
  private taint(argv: readonly Field[]): void {
    for (const f of argv.slice(1)) {
      const v = f.value ?? '';
      if (v === 'HOME' || v.startsWith('HOME=')) this.scope.homeTainted = true;
      if (v === 'CDPATH' || v.startsWith('CDPATH=')) this.scope.cdpathTainted = true;
    }
  }

  private scan(node: Node): void {
    const text = node.text;
    if (node.type === 'word' && /[ \t\n]/.test(text) && hasUnescapedBlank(text)) {
      this.findings.cannot('unanalyzable.parse-error', 'the parser merged several words into one');
    }
    if ((text.includes('$(') || text.includes('`')) && hasUnescaped(text, /\$\(|`/y)) {
      this.findings.cannot('unanalyzable.hidden-substitution', `a command substitution inside ${node.type}`);
    }
  }

  /** Walks a non-statement subtree: substitutions are analyzed, unstructured text is scanned. */
  private expr(node: Node, ctx: WalkContext): void {
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

  private exprChildren(node: Node, ctx: WalkContext): void {
    for (const c of allChildren(node)) if (c.isNamed) this.expr(c, ctx);
  }

  private commandSubstitution(node: Node, ctx: WalkContext): void {
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

  private env(ctx: WalkContext, fixedScope?: CwdScope): CommandEnv {
    const findings = this.findings;
    const scope = (): CwdScope => fixedScope ?? this.scope;
    // After `exec < file` (or `exec <<< code`) the shell's own stdin is that source.
    const stdin = ctx.stdin.kind === 'inherit' ? (scope().execStdin ?? ctx.stdin) : ctx.stdin;
    const env: CommandEnv = {
      depth: this.depth,
      stdin,
      hardline: (id, detail) => findings.hit(id, detail),
      unanalyzable: (id, detail) => findings.cannot(id, detail),
      verdict: (v: Verdict) => {
        if (v === null) return;
        if ('match' in v) findings.hit(v.match, v.detail);
        else findings.cannot(v.unknown, v.detail);
      },
      resolve: (f) => scope().resolve(f),
      caution: (id, detail) => findings.needsHuman(id, detail),
      ...pathEffects(findings, scope),
      wasWritten: (f) =>
        scope()
          .resolve(f)
          .refs.some((ref) => findings.wasWritten(ref.text)),
      hasEffects: (code) => {
        if (this.depth + 1 > MAX_DEPTH) return true;
        const probe = new Findings();
        new Walker(this.parser, probe, this.depth + 1, scope().clone()).run(code, {
          ...ctx,
          conditional: true,
        });
        return (
          probe.hardline !== null ||
          probe.unanalyzable !== null ||
          probe.caution !== null ||
          probe.trees.size > 0 ||
          [...probe.reads, ...probe.writes, ...probe.probes].some((p) => /^(\/|~)/.test(p))
        );
      },
      analyzeCode: (code, options) =>
        this.nested(code, { ...ctx, stdin: options?.stdin ?? stdin }, options?.sameShell === true, scope()),
      changeDir: (kind, target, physical) => scope().change(kind, target, ctx.conditional, physical),
      withStdin: (stdin) => this.env({ ...ctx, stdin }, fixedScope),
      withChdir: (target) => {
        const moved = scope().clone();
        moved.change('cd', target, false);
        return this.env(ctx, moved);
      },
      noteProgram: (names) => {
        if (ctx.async && names.some((n) => ctx.funcs.includes(n))) {
          findings.hit(
            'hardline.fork-bomb',
            `function ${names[0] ?? ''} calls itself in a pipeline or background`,
          );
        }
      },
    };
    return env;
  }
}

/** Runs a whole command string through a fresh walker at depth 0. */
export function walkCommand(parser: BashParser, findings: Findings, command: string): void {
  new Walker(parser, findings, 0, new CwdScope()).run(command, TOP);
}
