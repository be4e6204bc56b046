import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { graphOf, MACHINES, renderGraph, VIZ_FORMATS, type VizFormat } from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';

const USAGE = `usage: snotra viz [machine] [--format ${VIZ_FORMATS.join('|')} | --json] [--out FILE]  (machines: ${Object.keys(MACHINES).join(', ')}; default run, mermaid)`;

/** `snotra viz`: a machine's states and transitions, generated from its definition. */
export async function vizCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        format: { type: 'string' },
        json: { type: 'boolean', default: false },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.stdout(`${USAGE}\n`);
    return ExitCode.ok;
  }
  if (positionals.length > 1) throw new UsageError(`one machine at a time\n${USAGE}`);
  const name = positionals[0] ?? 'run';
  const graph = graphOf(name);
  if (graph === null) throw new UsageError(`unknown machine ${JSON.stringify(name)}\n${USAGE}`);
  if (values.json && values.format !== undefined && values.format !== 'json')
    throw new UsageError(`--json is --format json; it cannot go with --format ${values.format}\n${USAGE}`);
  const format = (values.format ?? (values.json ? 'json' : 'mermaid')) as VizFormat;
  if (!VIZ_FORMATS.includes(format))
    throw new UsageError(
      `--format: expected one of ${VIZ_FORMATS.join(', ')}, got ${JSON.stringify(values.format)}\n${USAGE}`,
    );
  const text = await renderGraph(graph, format);
  if (values.out === undefined) io.stdout(text);
  else writeFileSync(resolve(cwd, values.out), text);
  return ExitCode.ok;
}
