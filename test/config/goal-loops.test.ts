import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../runtime/config/errors.ts';
import { parseConfig } from '../../runtime/config/load.ts';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-goal-config-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const load = (goalLoops: unknown[], agents: Record<string, unknown> = { worker: { mode: 'ask' } }) =>
  parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'w', path: '.', access: 'read-write' }] },
      agents,
      surfaces: { goalLoops },
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );

function problems(goalLoops: unknown[]): string[] {
  try {
    load(goalLoops);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected the config to be refused');
}

describe('surfaces.goalLoops', () => {
  it('accepts a goal with defaults: maxIterations 10, no budget', () => {
    const loaded = load([{ id: 'fix-tests', agent: 'worker', objective: 'make npm test pass' }]);
    expect(loaded.config.surfaces.goalLoops).toEqual([
      { id: 'fix-tests', agent: 'worker', objective: 'make npm test pass', maxIterations: 10 },
    ]);
  });

  it('accepts a budget of model calls, tool calls, wall time, tokens and cost', () => {
    const loaded = load([
      {
        id: 'g',
        agent: 'worker',
        objective: 'x',
        maxIterations: 3,
        budget: { modelCalls: 20, toolCalls: 40, wallTimeMs: 600000, tokens: 50_000, costUsd: 0.75 },
      },
    ]);
    expect(loaded.config.surfaces.goalLoops[0]?.budget).toEqual({
      modelCalls: 20,
      toolCalls: 40,
      wallTimeMs: 600000,
      tokens: 50_000,
      costUsd: 0.75,
    });
  });

  it('refuses, naming the field: unknown agent (with did-you-mean), duplicate id, missing objective, bad numbers, unknown keys', () => {
    expect(problems([{ id: 'g', agent: 'workr', objective: 'x' }]).join('\n')).toMatch(
      /surfaces\.goalLoops\[0\]\.agent: unknown agent "workr".*worker/,
    );
    expect(
      problems([
        { id: 'g', agent: 'worker', objective: 'a' },
        { id: 'g', agent: 'worker', objective: 'b' },
      ]),
    ).toContain('surfaces.goalLoops[1].id: duplicate goal loop id "g"');
    expect(problems([{ id: 'g', agent: 'worker' }]).join('\n')).toMatch(
      /surfaces\.goalLoops\.0\.objective|surfaces\.goalLoops\[0\]\.objective/,
    );
    expect(problems([{ id: 'g', agent: 'worker', objective: 'x', maxIterations: 0 }]).join('\n')).toMatch(
      /maxIterations/,
    );
    expect(
      problems([{ id: 'g', agent: 'worker', objective: 'x', budget: { modelCalls: -1 } }]).join('\n'),
    ).toMatch(/budget.*modelCalls/);
    expect(
      problems([{ id: 'g', agent: 'worker', objective: 'x', budget: { tokens: 2.5 } }]).join('\n'),
    ).toMatch(/budget.*tokens/);
    expect(
      problems([{ id: 'g', agent: 'worker', objective: 'x', budget: { costUsd: 0 } }]).join('\n'),
    ).toMatch(/budget.*costUsd/);
    expect(
      problems([{ id: 'g', agent: 'worker', objective: 'x', budget: { tokenz: 5 } }]).join('\n'),
    ).toMatch(/tokenz/);
    expect(problems([{ id: 'g', agent: 'worker', objective: 'x', maxIterations: 2.5 }]).join('\n')).toMatch(
      /maxIterations/,
    );
    expect(problems([{ id: 'a b', agent: 'worker', objective: 'x' }]).join('\n')).toMatch(/goalLoops.*id/);
  });
});

describe('surfaces.goalLoops ids beside agent ids', () => {
  it('refuses a goal whose id is also an agent id (the actor tree names both by id); a look-alike id is fine', () => {
    expect(problems([{ id: 'worker', agent: 'worker', objective: 'x' }])).toEqual([
      `surfaces.goalLoops[0].id: "worker" is also an agent's id; a goal loop needs an id of its own`,
    ]);
    expect(
      load([{ id: 'worker-goal', agent: 'worker', objective: 'x' }]).config.surfaces.goalLoops,
    ).toHaveLength(1);
    expect(load([{ id: 'Worker', agent: 'worker', objective: 'x' }]).config.surfaces.goalLoops).toHaveLength(
      1,
    );
  });
});
