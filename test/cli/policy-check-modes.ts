/**
 * The harness of the `snotra policy check` case tables: a workspace with one agent per mode,
 * and one `policy check --stdin --json` process that answers every case in every mode.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Decision } from '../../policy/decision.ts';
import { callOf, expectedIn, type FailClosedCase } from '../policy/shell-failclosed-cases.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const MODES = ['allow', 'ask', 'deny'] as const;

/** A temp dir with `project/` (prepared by `prepare`) and a config of agents `in-allow`, `in-ask`, `in-deny`. */
export function modesWorkspace(
  prefix: string,
  prepare: (dir: string, project: string) => void,
): { dir: string; configFile: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const project = join(dir, 'project');
  mkdirSync(project);
  prepare(dir, project);
  const configFile = join(dir, 'snotra.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      // The state dir inside the primary root, as the old default had it (fail-closed class 10).
      stateDir: 'project/.snotra',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write', primary: true }] },
      agents: { 'in-allow': { mode: 'allow' }, 'in-ask': { mode: 'ask' }, 'in-deny': { mode: 'deny' } },
    }),
  );
  return { dir, configFile };
}

/**
 * Runs every case in every mode through one `snotra policy check` process and returns the cases
 * decided otherwise than the table expects (empty when all hold); stderr must stay empty.
 */
export function wronglyDecided(
  ws: { dir: string; configFile: string },
  cases: readonly FailClosedCase[],
): string[] {
  const lines = MODES.flatMap((mode) =>
    cases.map((c) => JSON.stringify({ ...callOf(c), agent: `in-${mode}` })),
  );
  const r = spawnSync(
    process.execPath,
    [BIN, 'policy', 'check', '--config', ws.configFile, '--stdin', '--json'],
    {
      input: `${lines.join('\n')}\n`,
      encoding: 'utf8',
      cwd: ws.dir,
      timeout: 120_000,
      killSignal: 'SIGKILL',
    },
  );
  expect(r.stderr).toBe('');
  const out = r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => Decision.parse(JSON.parse(l)));
  expect(out).toHaveLength(lines.length);
  const wrong: string[] = [];
  MODES.forEach((mode, m) => {
    cases.forEach((c, i) => {
      const d = out[m * cases.length + i] as Decision;
      const want = expectedIn(mode, c.expect, d.risk);
      if (d.decision !== want.decision || d.reason !== want.reason) {
        wrong.push(
          `${mode} class ${c.cls} ${JSON.stringify(callOf(c).args)}: ${d.decision}/${d.reason}, want ${want.decision}/${want.reason}`,
        );
      }
    });
  });
  return wrong;
}
