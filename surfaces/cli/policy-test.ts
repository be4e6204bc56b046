import { parseArgs } from 'node:util';
import {
  createPolicyEnvironment,
  resolveConfig,
  runPolicyTests,
  type PolicyTestRow,
} from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';

const USAGE = 'usage: snotra policy test [--config F] [--json]';

// Matching control characters is the point here.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const safe = (t: string) => t.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The rows as a table: agent, rule, matcher, expectation, example, what the matcher said, ok/FAIL. */
export function policyTestTable(rows: readonly PolicyTestRow[]): string {
  if (rows.length === 0) return 'no rule carries examples\n';
  const head = ['agent', 'rule', 'matcher', 'expect', 'got', 'result', 'example'];
  const body = rows.map((r) => [
    r.agent,
    r.ruleId,
    r.matcher,
    r.expect,
    r.got,
    r.ok ? 'ok' : 'FAIL',
    JSON.stringify(r.example),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const failed = rows.filter((r) => !r.ok).length;
  const summary = `${rows.length - failed} passed, ${failed} failed`;
  return `${safe([line(head), ...body.map(line)].join('\n'))}\n${summary}\n`;
}

/**
 * `snotra policy test [--config F] [--json]`: runs the `examples` of every agent's rules (policy
 * tests) and prints a table, or with --json `{"results":[…],"passed":N,"failed":N}`. Exit 0 when
 * every example behaves as it says, 1 when one does not (the same config refuses to load).
 */
export async function policyTestCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { config: { type: 'string' }, json: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const loaded = resolveConfig(values.config, cwd, { examples: false });
  const env = await createPolicyEnvironment(loaded, {
    examples: false,
    detectSandbox: () => ({ name: 'none', reason: 'not needed to run examples' }),
  });
  const rows = runPolicyTests(loaded.config, env.shell.commands?.bind(env.shell) ?? null);
  const failed = rows.filter((r) => !r.ok).length;
  io.stdout(
    values.json
      ? `${JSON.stringify({ results: rows, passed: rows.length - failed, failed })}\n`
      : policyTestTable(rows),
  );
  return failed === 0 ? ExitCode.ok : 1;
}
