/**
 * picomatch 4.0.7 never returns from parsing a glob that ends in a run of four or more
 * backslashes (`*\\\\`, `a/\\\\`): its "collapse slashes" step moves the index past the end of
 * the input, where its end-of-input test (`index === length - 1`) never holds again. Every
 * place that compiles a glob calls this first, inside its own try: such a glob is refused as one
 * that does not compile (fail closed), never handed to picomatch.
 */
export function assertPicomatchTerminates(glob: string): void {
  if (/\\{4,}$/.test(glob)) throw new SyntaxError(`glob ends in a run of 4 or more backslashes: ${glob}`);
}
