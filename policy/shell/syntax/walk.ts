/**
 * The walk over a bash syntax tree: every simple command in lists, pipelines, `&`, subshells,
 * groups, loops, conditionals, functions, command and process substitutions (also inside
 * strings, here-documents, redirections and expansions) is analyzed with its context (stdin,
 * background, enclosing functions, working directory). Literal code in `sh -c`, `eval`, ... and
 * backtick bodies is parsed again, one level deeper, up to MAX_DEPTH.
 */
import type { Node } from 'web-tree-sitter';
import { analyzeArgv } from '../command.ts';
import { CwdScope } from '../effects/cwd.ts';
import type { CwdEntry } from '../effects/cwd.ts';
import type { CommandEnv, StdinSource, Verdict } from '../effects/env.ts';
import { Findings } from '../effects/findings.ts';
import { pathEffects } from '../effects/path-effects.ts';
import { allChildren, CONDITIONAL, fieldsOf, namedChildren, REDIRECTS, STATEMENTS } from './nodes.ts';
import type { BashParser } from './parser.ts';
import { pipeSource } from './pipes.ts';
import { repairText } from './repair.ts';
import { MAX_DEPTH, TOP } from './walk-context.ts';
import type { WalkContext } from './walk-context.ts';
import { WordWalker } from './walk-words.ts';
import { rewriteGrammarGaps } from './grammar-gaps.ts';
import { wordFields } from './words.ts';

/** Commands trusted to print process ids only (see words.ts isPidCommand). */
const PID_COMMANDS = new Set(['pgrep', 'pidof', 'lsof']);

/**
 * Walks one parsed command string (or nested code) and reports to shared findings: the
 * statements here, their words, redirections and assignments in WordWalker (walk-words.ts).
 */
export class Walker extends WordWalker {
  /** Parses and walks `code` (line continuations folded first, as bash does). */
  run(code: string, ctx: WalkContext): void {
    // bash reads a backslash at the very end of the input as itself (`dir C:\`).
    let text = /(^|[^\\])(\\\\)*\\$/.test(code) ? code + '\\' : code;
    let gapsTried = false;
    for (let attempt = 0; attempt < 4; attempt++) {
      let again: string | null = null;
      const parsed = this.parser.withTree(text, (root) => {
        again = repairText(root, text);
        if (again !== null) return true;
        // Valid bash the grammar reads as an error (`cat 0<>f`, `${PATH//:/ }`): parse it rewritten.
        if (root.hasError && !gapsTried) {
          gapsTried = true;
          again = rewriteGrammarGaps(text);
          if (again !== null) return true;
        }
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

  protected nested(code: string, ctx: WalkContext, sameShell: boolean, from: CwdScope = this.scope): void {
    if (this.depth + 1 > MAX_DEPTH) {
      this.findings.cannot('unanalyzable.depth-exceeded', `nested code deeper than ${MAX_DEPTH} levels`);
      return;
    }
    const scope = sameShell ? from : from.clone();
    new Walker(this.parser, this.findings, this.depth + 1, scope).run(code, ctx);
  }

  protected visit(node: Node, ctx: WalkContext): void {
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
  protected sequence(node: Node, ctx: WalkContext): void {
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

  protected env(ctx: WalkContext, fixedScope?: CwdScope): CommandEnv {
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
