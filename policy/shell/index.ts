/**
 * Shell command analysis (DESIGN.md §4, step 2) with a real parser: web-tree-sitter and the
 * tree-sitter-bash grammar.
 *
 * The rooms: syntax/ reads the command string (parser, walk, words into fields); programs/ is
 * the table of known programs, one entry per name in programs/index.ts (what each reads, writes,
 * walks and runs); rules/ holds the hardline rules and every rule id; effects/ records what a
 * command does to paths (the CommandEnv the programs report to, the findings, the tracked cwd).
 * analyzer.ts is the CommandAnalyzer, command.ts analyzes one expanded command line,
 * simple-commands.ts lists the simple commands for command rules.
 *
 * How a command string is read:
 * - syntax/parser.ts loads the grammar wasm once; syntax/walk.ts visits every simple command in
 *   lists, pipelines, `&`, subshells, groups, loops, conditionals, functions, `$(...)`, backticks
 *   (re-parsed after bash's backslash rules), process substitutions, here-documents and
 *   expansions (syntax/walk-words.ts); `\`+newline continuations are folded first, as bash does.
 * - syntax/words.ts, brace.ts and ansi-c.ts turn words into the fields bash would produce (quote
 *   removal, `$'..'`, brace expansion, `~` and `$HOME`); anything only known at run time stays
 *   dynamic.
 * - command.ts unwraps wrappers (programs/runners/wrappers.ts: sudo, doas, env, nice, timeout,
 *   xargs, ...), code runners (programs/runners/code-runners.ts: `sh -c`, `eval`, `source`,
 *   `trap`, `alias`, `cmd /c`, `powershell -Command`, code piped into a shell) and containers
 *   (programs/runners/containers.ts), tracks `cd` (effects/cwd.ts), and applies the hardline
 *   rules (rules/; ids in rules/ids.ts) and the read/write table (programs/files/).
 * - A hardline match anywhere wins (deny is stricter than asking); otherwise any part that cannot
 *   be followed makes the command unanalyzable; otherwise it is analyzed with its reads/writes.
 * - Fail closed (issue 12): every program is in a table (programs/index.ts gathers them: files/,
 *   trees.ts, git-paths.ts, links.ts, credentials.ts, the wrappers and code runners, or
 *   fail-closed.ts's list of programs that take no paths) or is unknown, and every argument of an
 *   unknown program that could name a file is a probe. Each path position must be static
 *   (effects/path-effects.ts): a variable, a substitution, a link made earlier or
 *   `/proc/<pid>/cwd` is a caution, as is inline interpreter code
 *   (programs/runners/inline-code.ts). The engine (policy/shell-step.ts) denies sensitive reads,
 *   writes, probes, globs (as every path they could match) and recursive walks of trees holding
 *   sensitive paths, and asks a human for cautions, reads outside the roots and probes outside
 *   the read-write roots.
 *
 * Issue 35 added: option values that name paths in programs with a table
 * (programs/option-values.ts), files named in sed and awk programs (programs/files/scripts.ts),
 * consoles and interpreters that take code in options or on stdin, and the fallback for unknown
 * programs given code (programs/runners/consoles.ts), names pasted into shell code
 * (programs/runners/pasted.ts), system changes recorded as writes of the state they change
 * (programs/system-state.ts), read-only device tools (programs/files/devices.ts), and valid bash
 * the grammar reads as an error, parsed rewritten (syntax/grammar-gaps.ts).
 *
 * Known limits (what this does not see): programs that run code from files (`bash script.sh`,
 * `make`, `npm test`, a script written by an earlier tool call), git aliases and hooks already in
 * a config file, PATH or function shadowing set up by an earlier command, code of other
 * languages beyond a keyword scan of inline `python -c` / `node -e` / `perl -e`, what runs
 * inside a container (only host mounts and privileges are checked), and semantics where
 * tree-sitter-bash and bash differ in ways not covered by the checks in syntax/ (those checks
 * fail closed: parse errors, unstructured substitutions, here-document ends, reserved words read
 * as commands).
 */
export { createShellAnalyzer, MAX_COMMAND_LENGTH } from './analyzer.ts';
export type { ShellAnalyzerOptions } from './analyzer.ts';
export { CAUTION_RULES, HARDLINE_RULES, UNANALYZABLE_RULES } from './rules/ids.ts';
export type { CautionRuleId, HardlineRuleId, UnanalyzableRuleId } from './rules/ids.ts';
export { MAX_DEPTH } from './syntax/walk-context.ts';
