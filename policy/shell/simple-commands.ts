/**
 * The simple commands of a command string, for rules that name a program or a command prefix
 * (policy/command-rule.ts). Built from the analyzer's own parts — the parser, word expansion,
 * the wrapper, code-runner, option-runner and container tables, find -exec — so a rule sees the
 * same program the analysis sees: `sudo git push`, `FOO=1 command git push` and
 * `sh -c 'git push'` all list `git push`.
 *
 * Every `command` node of the tree is listed, wherever it sits (lists, pipelines, substitutions,
 * function bodies, loops): listing more than runs only makes a rule match more often. Whatever
 * cannot be followed (a dynamic program name, code from a non-literal source, a parse error, a
 * limit) leaves `complete` false; the rule step then treats every command rule as a possible
 * match.
 */
import type { Node } from 'web-tree-sitter';
import type { CommandAnalyzer, CommandList, SimpleCommand } from '../seams.ts';
import { checkAssignment, MAX_LAYERS } from './command.ts';
import type { CommandEnv, StdinSource } from './effects/env.ts';
import { dynamicField, literalField } from './syntax/field.ts';
import type { Field } from './syntax/field.ts';
import { Lru } from './lru.ts';
import { fieldsOf, namedChildren, REDIRECTS, STATEMENTS } from './syntax/nodes.ts';
import {
  analyzeGitConfigs,
  analyzeOptionRunners,
  CODE_RUNNERS,
  CONTAINER_RUNNERS,
  parseFind,
  parseGit,
  programNames,
  WRAPPERS,
} from './programs/index.ts';
import { createBashParser, type BashParser } from './syntax/parser.ts';
import { pipeSource } from './syntax/pipes.ts';
import { repairText } from './syntax/repair.ts';
import { MAX_DEPTH } from './syntax/walk-context.ts';
import { wordFields } from './syntax/words.ts';

/** Most simple commands listed for one command string; beyond it the list is incomplete. */
export const MAX_LISTED = 4096;

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;
const RESERVED = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while']);
const FD_EXEC = new Set(['-x', '--exec', '-X', '--exec-batch']);

class Listing {
  readonly commands: SimpleCommand[] = [];
  complete = true;

  add(program: readonly string[], args: readonly Field[]): void {
    if (this.commands.length >= MAX_LISTED) {
      this.complete = false;
      return;
    }
    const words = args.map((a) => (a.value === null || a.glob ? null : a.value));
    const command: SimpleCommand = { program: Object.freeze([...program]), args: Object.freeze(words) };
    if (program.includes('git')) {
      // git's global options are known: the subcommand is the first word after them.
      const parsed = parseGit(args);
      if (!parsed.dynamic) {
        const at = parsed.sub === null ? args.length : args.length - parsed.args.length - 1;
        this.commands.push(Object.freeze({ ...command, subcommandAt: at }));
        return;
      }
    }
    this.commands.push(Object.freeze(command));
  }
}

/** The stdin `holder`'s own redirections give (a here-string's literal text, else opaque). */
function redirectedStdin(holder: Node, stdin: StdinSource): StdinSource {
  let result = stdin;
  for (const r of namedChildren(holder)) {
    if (r.type === 'heredoc_redirect') result = { kind: 'opaque' };
    else if (r.type === 'herestring_redirect') {
      const value = fieldsOf(namedChildren(r).filter((c) => c.type !== 'file_descriptor'));
      const code = value.length === 1 && value[0]?.value != null ? value[0].value + '\n' : null;
      result = { kind: 'herestring', code };
    } else if (r.type === 'file_redirect' && /^0?<(?![&>])/.test(r.text.trimStart()))
      result = { kind: 'opaque' };
  }
  return result;
}

/** The stdin a command node reads, as far as redirections or the pipeline around it say. */
function stdinOf(node: Node): StdinSource {
  let stage: Node = node;
  let stdin = redirectedStdin(node, { kind: 'inherit' });
  const parent = node.parent;
  if (parent?.type === 'redirected_statement' && parent.childForFieldName('body')?.id === node.id) {
    stage = parent;
    stdin = redirectedStdin(parent, stdin);
  }
  if (stdin.kind !== 'inherit') return stdin;
  const pipeline = stage.parent;
  if (pipeline?.type !== 'pipeline') return stdin;
  const stages = namedChildren(pipeline).filter((c) => STATEMENTS.has(c.type) || c.type === 'ERROR');
  const i = stages.findIndex((s) => s.id === stage.id);
  if (i <= 0) return stdin;
  const previous = stages[i - 1] as Node;
  const body = previous.type === 'redirected_statement' ? previous.childForFieldName('body') : previous;
  return body === null ? { kind: 'pipe', code: null, items: null } : pipeSource(body);
}

class Lister {
  constructor(
    private readonly parser: BashParser,
    private readonly out: Listing,
  ) {}

  /** Lists the simple commands of `code`, parsed `depth` levels below the command string. */
  code(code: string, depth: number, stdin: StdinSource): void {
    if (depth > MAX_DEPTH) {
      this.out.complete = false;
      return;
    }
    let text = code;
    for (let attempt = 0; attempt < 4; attempt++) {
      let again: string | null = null;
      const parsed = this.parser.withTree(text, (root) => {
        again = repairText(root, text);
        if (again !== null) return true;
        if (root.hasError) this.out.complete = false;
        this.tree(root, depth, stdin);
        return true;
      });
      if (parsed === null) {
        this.out.complete = false;
        return;
      }
      if (again === null) return;
      text = again;
    }
    this.out.complete = false;
  }

  private tree(root: Node, depth: number, stdin: StdinSource): void {
    const stack: Node[] = [root];
    while (stack.length > 0) {
      const node = stack.pop() as Node;
      if (node.type === 'command')
        this.command(node, depth, depth === 0 ? stdinOf(node) : nested(node, stdin));
      else if (node.type === 'variable_assignment') this.assignment(node, depth, stdin);
      stack.push(...namedChildren(node).reverse());
    }
  }

  private assignment(node: Node, depth: number, stdin: StdinSource): void {
    const name = node.childForFieldName('name');
    const value = node.childForFieldName('value');
    if (name?.type !== 'variable_name') return;
    const values = value === null ? [literalField('')] : value.type === 'array' ? [] : wordFields(value);
    checkAssignment(name.text, values.length === 1 ? (values[0] ?? null) : null, this.env(depth, stdin));
  }

  private command(node: Node, depth: number, stdin: StdinSource): void {
    const words = namedChildren(node).filter(
      (c) =>
        c.type !== 'variable_assignment' &&
        !REDIRECTS.has(c.type) &&
        !STATEMENTS.has(c.type) &&
        c.type !== 'comment',
    );
    this.argv(fieldsOf(words), this.env(depth, stdin), { n: 0 });
  }

  /** One expanded command line, looked through like the analysis does (policy/shell/command.ts). */
  private argv(argv: readonly Field[], env: CommandEnv, budget: { n: number }): void {
    let start = 0;
    while (start < argv.length - 1) {
      const f = argv[start] as Field;
      const m = ASSIGNMENT.exec(f.value ?? f.prefix);
      if (m === null) break;
      const name = m[1] ?? '';
      checkAssignment(name, f.value === null ? null : literalField(f.value.slice(name.length + 1)), env);
      start++;
    }
    const first = argv[start];
    if (first === undefined) return;
    const args = argv.slice(start + 1);
    if (++budget.n > MAX_LAYERS) {
      this.out.complete = false;
      return;
    }
    if (first.value === null || first.glob) {
      this.out.complete = false;
      return;
    }
    if (!first.quoted && RESERVED.has(first.value)) {
      this.out.complete = false;
      this.argv(args, env, budget);
      return;
    }
    const names = programNames(first);
    const name = names[0];
    if (name === undefined) return;
    this.out.add(names, args);
    if (name === 'env' || name === 'sudo' || name === 'doas' || name === 'export') {
      for (const f of args) {
        const m = ASSIGNMENT.exec(f.value ?? f.prefix);
        if (m === null) continue;
        const n = m[1] ?? '';
        checkAssignment(n, f.value === null ? null : literalField(f.value.slice(n.length + 1)), env);
      }
    }
    analyzeOptionRunners(names, args, env, (inner, innerEnv) => this.argv(inner, innerEnv, budget));
    const runner = names
      .map((n) => WRAPPERS[n] ?? CODE_RUNNERS[n] ?? CONTAINER_RUNNERS[n])
      .find((w) => w !== undefined);
    if (runner !== undefined) {
      const r = runner(args, env, name);
      switch (r.kind) {
        case 'exec':
          for (const inner of r.argvs) this.argv(inner, r.env ?? env, budget);
          return;
        case 'code':
          env.analyzeCode(r.code, r.fromStdin === true ? { stdin: { kind: 'inherit' } } : {});
          return;
        case 'done':
          return;
        case 'unknown':
          this.out.complete = false;
          return;
      }
    }
    if (name === 'git') analyzeGitConfigs(parseGit(args), env);
    if (name === 'find' || name === 'gfind') {
      for (const e of parseFind(args).execs) {
        this.argv(
          e.argv.map((f) => (f.value !== null && f.value.includes('{}') ? dynamicField(false) : f)),
          env,
          budget,
        );
      }
    } else if (name === 'fd' || name === 'fdfind') {
      const i = args.findIndex((a) => FD_EXEC.has(a.value ?? ''));
      if (i >= 0) this.argv(args.slice(i + 1), env, budget);
    }
  }

  /** A CommandEnv that records nothing but what leads to more commands. */
  private env(depth: number, stdin: StdinSource): CommandEnv {
    const out = this.out;
    const env: CommandEnv = {
      depth,
      stdin,
      hardline: () => undefined,
      unanalyzable: () => {
        out.complete = false;
      },
      verdict: (v) => {
        if (v !== null && 'unknown' in v) out.complete = false;
      },
      resolve: (f) => ({ refs: [], unknown: f.value === null }),
      read: () => undefined,
      write: () => undefined,
      wasWritten: () => false,
      analyzeCode: (code, options) => this.code(code, depth + 1, options?.stdin ?? stdin),
      noteProgram: () => undefined,
      caution: () => undefined,
      probe: () => undefined,
      tree: () => undefined,
      link: () => undefined,
      // Code is listed (analyzeCode) whatever it does: a command rule must see inside it.
      hasEffects: () => true,
      changeDir: () => undefined,
      withStdin: (s) => this.env(depth, s),
      withChdir: () => env,
    };
    return env;
  }
}

/** Inside nested code the stdin of the outer command stays, unless a pipeline inside says more. */
function nested(node: Node, outer: StdinSource): StdinSource {
  const own = stdinOf(node);
  return own.kind === 'inherit' ? outer : own;
}

/** Lists the simple commands of one command string with `parser`; never throws. */
export function listWith(parser: BashParser, command: string): CommandList {
  const out = new Listing();
  try {
    if (typeof command !== 'string' || command.includes('\0')) return { commands: [], complete: false };
    new Lister(parser, out).code(command, 0, { kind: 'inherit' });
  } catch {
    out.complete = false;
  }
  return Object.freeze({ commands: Object.freeze(out.commands), complete: out.complete });
}

/**
 * The analyzer `analyzer` with `commands()` added: the simple commands of a command string,
 * parsed with its own bash parser (the grammar is loaded once per process) and cached per
 * command string like the analysis.
 */
export async function withSimpleCommands(analyzer: CommandAnalyzer): Promise<CommandAnalyzer> {
  const parser = await createBashParser();
  const cache = new Lru<string, CommandList>(1024);
  return {
    analyze: (command) => analyzer.analyze(command),
    commands(command: string): CommandList {
      const hit = cache.get(command);
      if (hit !== undefined) return hit;
      const list = listWith(parser, command);
      if (typeof command === 'string' && command.length <= 4096) cache.set(command, list);
      return list;
    },
  };
}
