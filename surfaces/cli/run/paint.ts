/** Colours for a terminal; the plain one leaves text as it is. */
export interface Paint {
  readonly on: boolean;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
  cyan(text: string): string;
}

const sgr =
  (open: number, close: number) =>
  (text: string): string =>
    `\u001b[${open}m${text}\u001b[${close}m`;

/** No colour: `NO_COLOR`, `--no-color`, or output that is not a terminal. */
export const plain: Paint = {
  on: false,
  green: (t) => t,
  red: (t) => t,
  yellow: (t) => t,
  dim: (t) => t,
  bold: (t) => t,
  cyan: (t) => t,
};

/** ANSI colours. */
export const ansi: Paint = {
  on: true,
  green: sgr(32, 39),
  red: sgr(31, 39),
  yellow: sgr(33, 39),
  dim: sgr(2, 22),
  bold: sgr(1, 22),
  cyan: sgr(36, 39),
};

/**
 * The colours to use: none when asked (`--no-color`), when `NO_COLOR` is set to anything
 * non-empty (no-color.org), or when the output is not a terminal.
 */
export function paintFor(isTTY: boolean, noColorFlag: boolean, env: NodeJS.ProcessEnv = process.env): Paint {
  if (noColorFlag || !isTTY) return plain;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return plain;
  return ansi;
}
