import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Decision } from '../../policy/decision.ts';
import { BYPASS_CASES, prepareBypassWorkspace } from '../policy/shell-bypass-cases.ts';
import { callOf, expectedIn } from '../policy/shell-failclosed-cases.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-cli-bypass-')));
const project = join(dir, 'project');
mkdirSync(project);
prepareBypassWorkspace(dir, project);
const configFile = join(dir, 'snotra.config.json');
writeFileSync(
  configFile,
  JSON.stringify({
    stateDir: 'project/.snotra',
    workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write', primary: true }] },
    agents: { 'in-allow': { mode: 'allow' }, 'in-ask': { mode: 'ask' }, 'in-deny': { mode: 'deny' } },
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('snotra policy check: the bypass classes of issue 35 in all three modes', () => {
  it('answers every case as the policy tests expect (one process, --stdin, every mode)', () => {
    const modes = ['allow', 'ask', 'deny'] as const;
    const lines = modes.flatMap((mode) =>
      BYPASS_CASES.map((c) => JSON.stringify({ ...callOf(c), agent: `in-${mode}` })),
    );
    const r = spawnSync(
      process.execPath,
      [BIN, 'policy', 'check', '--config', configFile, '--stdin', '--json'],
      {
        input: `${lines.join('\n')}\n`,
        encoding: 'utf8',
        cwd: dir,
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
    modes.forEach((mode, m) => {
      BYPASS_CASES.forEach((c, i) => {
        const d = out[m * BYPASS_CASES.length + i] as Decision;
        const want = expectedIn(mode, c.expect, d.risk);
        if (d.decision !== want.decision || d.reason !== want.reason) {
          wrong.push(
            `${mode} class ${c.cls} ${JSON.stringify(callOf(c).args)}: ${d.decision}/${d.reason}, want ${want.decision}/${want.reason}`,
          );
        }
      });
    });
    expect(wrong).toEqual([]);
  });
});
