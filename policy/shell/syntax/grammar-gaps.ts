/**
 * Valid bash that tree-sitter-bash reads as a syntax error (issue 35, an over-block), rewritten
 * to text it parses the same way for the analysis: `N<>file` (open for reading and writing:
 * `N>|file`, a write), an empty `$( )` (the empty string `""`), `${NAME//pattern/replacement}`
 * and the other pattern operators without code in them (`${NAME}`: the value is only known at
 * run time anyway), and an empty `[[ ]]` (true). Tried only when the first parse has an error;
 * the rewritten text must then parse cleanly, or the command stays unanalyzable.
 */

/** `${NAME<operator>...}` with no expansion, substitution or quote inside. */
const PATTERN_EXPANSION = /^\$\{([A-Za-z_][A-Za-z0-9_]*)([/:#%^,@][^${}`()'"\\]*)\}/;

/**
 * The rewritten text when `text` has one of the constructs above outside single quotes, else
 * null. Quoting is followed (single quotes, double quotes, backslashes) so literal text is kept.
 */
export function rewriteGrammarGaps(text: string): string | null {
  let out = '';
  let changed = false;
  let double = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\') {
      out += text.slice(i, i + 2);
      i++;
      continue;
    }
    if (!double && c === "'") {
      const end = text.indexOf("'", i + 1);
      const stop = end < 0 ? text.length : end + 1;
      out += text.slice(i, stop);
      i = stop - 1;
      continue;
    }
    if (c === '"') double = !double;
    const rest = text.slice(i);
    const empty = /^\$\(\s*\)/.exec(rest);
    if (empty !== null) {
      out += '""';
      i += empty[0].length - 1;
      changed = true;
      continue;
    }
    const pattern = PATTERN_EXPANSION.exec(rest);
    if (pattern !== null) {
      out += `\${${pattern[1] ?? ''}}`;
      i += pattern[0].length - 1;
      changed = true;
      continue;
    }
    if (!double) {
      const rw = /^<>/.exec(rest);
      if (rw !== null && (i === 0 || /[\s0-9;|&(]/.test(text[i - 1] ?? ''))) {
        out += '>|';
        i += 1;
        changed = true;
        continue;
      }
      const test = /^\[\[\s*\]\]/.exec(rest);
      if (test !== null && (i === 0 || /[\s;|&(]/.test(text[i - 1] ?? ''))) {
        out += 'true';
        i += test[0].length - 1;
        changed = true;
        continue;
      }
    }
    out += c;
  }
  return changed ? out : null;
}
