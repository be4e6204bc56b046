/**
 * The literal text a glob's every match must contain: a cheap test that rules a glob out before
 * its regular expression is compiled or run (most paths match no sensitive rule, and compiling
 * every rule's expression for one decision cost more than the rest of a `policy check`).
 *
 * A glob made of literal characters, `\`-escapes, `*`, `**`, `?` and `/` matches only strings
 * that contain each run of its literal characters between two wildcards or separators, in
 * order; as a test, the runs are required as substrings (weaker, still sound). Only ASCII runs
 * are required, compared lower-cased: a case-insensitive expression matches an ASCII character
 * only with an ASCII one of either case, and lower-casing a key keeps every ASCII character it
 * has. Any other glob syntax (classes, braces, extglobs, negation) gives no test (`null`).
 */

/** Characters that make a glob more than literals, wildcards and separators. */
const OTHER_SYNTAX = new Set(['[', ']', '{', '}', '(', ')', '!', '+', '@', '|', '^', '$']);

/** The lower-cased ASCII runs every match of `glob` contains, or null when it has no such test. */
export function requiredLiterals(glob: string): string[] | null {
  // After a run of three or more stars picomatch leaves a `.` unescaped, even an escaped one:
  // `***1.` compiles to `[^/]*?1.)` and matches "1a" (found by the law in a fresh-clone run).
  // Such a glob gets no test rather than one its matcher does not keep to.
  if (glob.includes('***')) return null;
  const runs: string[] = [];
  let run = '';
  const end = (): void => {
    // A lone `.` is no requirement: the matcher drops a leading `./` (`./**/` matches "").
    if (run.length > 0 && run !== '.') runs.push(run);
    run = '';
  };
  for (let i = 0; i < glob.length; i++) {
    let ch = glob[i] as string;
    if (ch === '\\') {
      i++;
      if (i >= glob.length) return null;
      ch = glob[i] as string;
      // An escaped backslash is no requirement: picomatch drops it before a non-ASCII character
      // (`s\\\\ß` matches "sß"; found by the law in deep mode).
      if (ch === '\\') {
        end();
        continue;
      }
    } else if (ch === '*' || ch === '?' || ch === '/') {
      end();
      continue;
    } else if (OTHER_SYNTAX.has(ch)) return null;
    if (ch.charCodeAt(0) > 0x7f) end();
    else run += ch.toLowerCase();
  }
  end();
  return runs;
}

/** Whether `loweredKey` (a key lower-cased) contains every run: false means the glob cannot match it. */
export function mayMatch(runs: readonly string[] | null, loweredKey: string): boolean {
  if (runs === null) return true;
  for (const run of runs) if (!loweredKey.includes(run)) return false;
  return true;
}
