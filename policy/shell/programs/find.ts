/** Parsing of `find` command lines: starting points, -delete, -exec/-execdir/-ok commands, -fprint files. */
import type { Field } from '../syntax/field.ts';

/** One `-exec`/`-execdir`/`-ok`/`-okdir` command of a find expression. */
export interface FindExec {
  readonly argv: readonly Field[];
}

/** The parts of a find command line the analysis needs. */
export interface FindParse {
  /** Starting points (defaults to `.` when none is given; null entries are only known at run time). */
  readonly starts: readonly Field[];
  /** True when `-delete` is in the expression. */
  readonly deletes: boolean;
  /** Commands run per match. */
  readonly execs: readonly FindExec[];
  /** Files written by -fprint, -fprint0, -fprintf, -fls. */
  readonly outputs: readonly Field[];
  /** True when a non-literal word stood in the expression (it could be -delete or -exec). */
  readonly dynamicExpression: boolean;
  /** True when the walk follows symlinks (`-L`, `-follow`). */
  readonly follows: boolean;
  /** True when `-maxdepth 0` or `-maxdepth 1` keeps the walk to the starts and their names. */
  readonly shallow: boolean;
  /**
   * True when a test (`-name`, `-path`, `-type`, ...) limits what the actions act on and no
   * `-o`/`,` can make an action unconditional: a `-delete` then may spare what it walks through.
   */
  readonly filtered: boolean;
}

/** find tests that limit which entries an action applies to. */
const TESTS =
  /^-(i?name|i?path|i?wholename|i?regex|x?type|newer.*|[acm](time|min)|size|empty|user|group|nouser|nogroup|perm|links|inum|samefile|i?lname|uid|gid|used|readable|writable|executable)$/;

const EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const OUTPUT = new Set(['-fprint', '-fprint0', '-fls']);
const EXPR_START = new Set(['(', ')', '!', ',']);

/** Parses the arguments of `find` (GNU and BSD syntax). */
export function parseFind(args: readonly Field[]): FindParse {
  let i = 0;
  let follows = false;
  while (i < args.length) {
    const v = args[i]?.value;
    if (v === '-L') follows = true;
    else if (v === '-P' || v === '-H') follows = false;
    if (v === '-H' || v === '-L' || v === '-P' || (v !== undefined && v !== null && /^-O\d*$/.test(v))) i++;
    else if (v === '-D' || v === '-f') i += 2;
    else break;
  }
  const starts: Field[] = [];
  let dynamicExpression = false;
  for (; i < args.length; i++) {
    const f = args[i] as Field;
    if (f.value === null) {
      if (f.prefix.startsWith('-')) break;
      dynamicExpression = true;
      starts.push(f);
      continue;
    }
    if (f.value.startsWith('-') || EXPR_START.has(f.value)) break;
    starts.push(f);
  }
  let deletes = false;
  let shallow = false;
  let tested = false;
  let alternative = false;
  const execs: FindExec[] = [];
  const outputs: Field[] = [];
  for (; i < args.length; i++) {
    const f = args[i] as Field;
    const v = f.value;
    if (v === null) {
      dynamicExpression = true;
      continue;
    }
    if (TESTS.test(v)) tested = true;
    else if (v === '-o' || v === '-or' || v === ',') alternative = true;
    if (v === '-delete') deletes = true;
    else if (v === '-follow') follows = true;
    else if (v === '-maxdepth') {
      const depth = args[i + 1]?.value;
      shallow = depth === '0' || depth === '1';
      i++;
    } else if (OUTPUT.has(v) || v === '-fprintf') {
      const out = args[i + 1];
      if (out) outputs.push(out);
      i += v === '-fprintf' ? 2 : 1;
    } else if (EXEC.has(v)) {
      const argv: Field[] = [];
      let j = i + 1;
      for (; j < args.length; j++) {
        const w = args[j] as Field;
        if (w.value === ';' || (w.value === '+' && argv[argv.length - 1]?.value === '{}')) break;
        argv.push(w);
      }
      execs.push({ argv });
      i = j;
    }
  }
  const filtered = tested && !alternative && !dynamicExpression;
  return { starts, deletes, execs, outputs, dynamicExpression, follows, shallow, filtered };
}
