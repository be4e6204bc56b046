/**
 * Shell command analysis (DESIGN.md §4, step 2) with a real parser: web-tree-sitter and the
 * tree-sitter-bash grammar.
 *
 * How a command string is read:
 * - parser.ts loads the grammar wasm once; walk.ts visits every simple command in lists,
 *   pipelines, `&`, subshells, groups, loops, conditionals, functions, `$(...)`, backticks
 *   (re-parsed after bash's backslash rules), process substitutions, here-documents and
 *   expansions; `\`+newline continuations are folded first, as bash does.
 * - words.ts / brace.ts / ansi-c.ts turn words into the fields bash would produce (quote removal,
 *   `$'..'`, brace expansion, `~` and `$HOME`); anything only known at run time stays dynamic.
 * - command.ts unwraps wrappers (wrappers.ts: sudo, doas, env, nice, timeout, xargs, ...), code
 *   runners (interpreters.ts: `sh -c`, `eval`, `source`, `trap`, `alias`, `cmd /c`,
 *   `powershell -Command`, code piped into a shell) and containers (containers.ts), tracks `cd`
 *   (cwd.ts), and applies the hardline rules (rules.ts, git.ts, find.ts, paths.ts; ids in ids.ts)
 *   and the read/write table (fileargs.ts).
 * - A hardline match anywhere wins (deny is stricter than asking); otherwise any part that cannot
 *   be followed makes the command unanalyzable; otherwise it is analyzed with its reads/writes.
 * - Fail closed (issue 12): every program is in a table (fileargs.ts, trees.ts, git-paths.ts,
 *   links.ts, credentials.ts, the wrappers and code runners, or programs.ts's list of programs
 *   that take no paths) or is unknown, and every argument of an unknown program that could name
 *   a file is a probe. Each path position must be static (path-effects.ts): a variable, a
 *   substitution, a link made earlier or `/proc/<pid>/cwd` is a caution, as is inline
 *   interpreter code (inline-code.ts). The engine (policy/shell-step.ts) denies sensitive
 *   reads, writes, probes, globs (as every path they could match) and recursive walks of trees
 *   holding sensitive paths, and asks a human for cautions, reads outside the roots and probes
 *   outside the read-write roots.
 *
 * Known limits (what this does not see): programs that run code from files (`bash script.sh`,
 * `make`, `npm test`, a script written by an earlier tool call), git aliases and hooks already in
 * a config file, PATH or function shadowing set up by an earlier command, code of other
 * languages beyond a keyword scan of inline `python -c` / `node -e` / `perl -e`, what runs
 * inside a container (only host mounts and privileges are checked), and semantics where
 * tree-sitter-bash and bash differ in ways not covered by the checks in walk.ts (those checks
 * fail closed: parse errors, unstructured substitutions, here-document ends, reserved words read
 * as commands).
 */
export { createShellAnalyzer, MAX_COMMAND_LENGTH } from './analyzer.ts';
export type { ShellAnalyzerOptions } from './analyzer.ts';
export { CAUTION_RULES, HARDLINE_RULES, UNANALYZABLE_RULES } from './rules/ids.ts';
export type { CautionRuleId, HardlineRuleId, UnanalyzableRuleId } from './rules/ids.ts';
export { MAX_DEPTH } from './syntax/walk-context.ts';
