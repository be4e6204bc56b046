/**
 * The completion scripts of `snotra completion bash|zsh|fish`, written from the completion tree.
 * Every word comes from the command specs (names and flags are `[a-z0-9-]`); summaries are
 * quoted for each shell.
 */
import type { CompletionTree, Word } from './tree.ts';

const names = (words: readonly Word[]): string => words.map((w) => w.name).join(' ');

/** Bash: `complete -F` over `COMP_WORDS` (command, subcommand, then the leaf's flags). */
export function bashScript(tree: CompletionTree): string {
  const groupCases = [...tree.groups].map(
    ([group, subs]) => `      ${group}) COMPREPLY=($(compgen -W "${names(subs)}" -- "$cur")); return ;;`,
  );
  const flagCases = [...tree.flags].map(
    ([path, flags]) => `    "${path}") COMPREPLY=($(compgen -W "${names(flags)}" -- "$cur")) ;;`,
  );
  return `# snotra completion for bash: source <(snotra completion bash)
_snotra() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${names(tree.top)}" -- "$cur"))
    return
  fi
  local cmd="\${COMP_WORDS[1]}"
  if [ "$COMP_CWORD" -eq 2 ]; then
    case "$cmd" in
${groupCases.join('\n')}
    esac
  fi
  case "$cmd" in
${[...tree.groups.keys()].map((g) => `    ${g}) cmd="$cmd \${COMP_WORDS[2]}" ;;`).join('\n')}
  esac
  case "$cur" in
    -*) ;;
    *) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  case "$cmd" in
${flagCases.join('\n')}
  esac
}
complete -o default -F _snotra snotra
`;
}

/** A zsh `compadd -d` pair of arrays: the words and their `word -- summary` lines. */
function zshAdd(words: readonly Word[], indent: string): string {
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const display = words.map((w) => quote(`${w.name.padEnd(14)} -- ${w.summary}`)).join(' ');
  return `${indent}local -a d=(${display})\n${indent}compadd -l -d d -- ${names(words)}`;
}

/** Zsh: a `_snotra` function registered with `compdef` (commands, subcommands, then flags). */
export function zshScript(tree: CompletionTree): string {
  const groupCases = [...tree.groups].map(
    ([group, subs]) => `      ${group})\n${zshAdd(subs, '        ')}\n        return ;;`,
  );
  const flagCases = [...tree.flags].map(
    ([path, flags]) => `    "${path}")\n${zshAdd(flags, '      ')}\n      ;;`,
  );
  return `#compdef snotra
# snotra completion for zsh: source <(snotra completion zsh), after compinit
_snotra() {
  if (( CURRENT == 2 )); then
${zshAdd(tree.top, '    ')}
    return
  fi
  local cmd="\${words[2]}"
  if (( CURRENT == 3 )); then
    case "$cmd" in
${groupCases.join('\n')}
    esac
  fi
  case "$cmd" in
${[...tree.groups.keys()].map((g) => `    ${g}) cmd="$cmd \${words[3]}" ;;`).join('\n')}
  esac
  if [[ "\${words[CURRENT]}" != -* ]]; then
    _files
    return
  fi
  case "$cmd" in
${flagCases.join('\n')}
  esac
}
if (( $+functions[compdef] )); then
  compdef _snotra snotra
fi
`;
}

/** Fish: one `complete` line per word, conditioned on the words already given. */
export function fishScript(tree: CompletionTree): string {
  const quote = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const lines = ['# snotra completion for fish: snotra completion fish | source', 'complete -c snotra -f'];
  for (const w of tree.top)
    lines.push(`complete -c snotra -n __fish_use_subcommand -a ${w.name} -d ${quote(w.summary)}`);
  for (const [group, subs] of tree.groups) {
    const none = `not __fish_seen_subcommand_from ${names(subs)}`;
    for (const w of subs)
      lines.push(
        `complete -c snotra -n '__fish_seen_subcommand_from ${group}; and ${none}' -a ${w.name} -d ${quote(w.summary)}`,
      );
  }
  for (const [path, flags] of tree.flags) {
    const cond = path
      .split(' ')
      .map((word) => `__fish_seen_subcommand_from ${word}`)
      .join('; and ');
    for (const f of flags)
      lines.push(`complete -c snotra -n '${cond}' -l ${f.name.slice(2)} -d ${quote(f.summary)}`);
  }
  return `${lines.join('\n')}\n`;
}
