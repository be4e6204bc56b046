/**
 * The seed's contract matrix (§13): each of the twelve tests through each execution surface's
 * real entry, on the real runtime (`snotra start` / `snotra mcp` child processes, their own
 * nats-server, SQLite, bubblewrap). One runtime per surface × group (main, restart, tree);
 * every case uses its own agents, so cases stay independent within a shared runtime.
 *
 * Surfaces whose driver lives on another branch (`drivers/goal.ts`, `drivers/platform.ts`,
 * exporting `driver`) join the matrix when the file exists: their cases are generated then,
 * never as skipped or passing placeholders before.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { CASES, SHARED_ENV, sharedConfig, type Group } from './cases/index.ts';
import { chatDriver } from './drivers/chat.ts';
import { mcpDriver } from './drivers/mcp.ts';
import { scheduledDriver } from './drivers/scheduled.ts';
import { subagentDriver } from './drivers/subagent.ts';
import { SURFACES, type SurfaceDriver, type SurfaceRuntime } from './drivers/types.ts';
import { groupFixture, type GroupFixture } from './fixture.ts';

const built: Partial<Record<(typeof SURFACES)[number], SurfaceDriver>> = {
  chat: chatDriver,
  scheduled: scheduledDriver,
  subagent: subagentDriver,
  mcp: mcpDriver,
};
for (const name of ['goal', 'platform'] as const) {
  const file = new URL(`./drivers/${name}.ts`, import.meta.url);
  if (!existsSync(file)) continue;
  const loaded = ((await import(file.href)) as { driver?: SurfaceDriver }).driver;
  // A driver file that does not export its driver is an error, never a surface left out quietly.
  if (loaded?.surface !== name)
    throw new Error(`test/contract/drivers/${name}.ts must export \`driver\` for surface ${name}`);
  built[name] = loaded;
}

const GROUPS: readonly Group[] = ['main', 'restart', 'tree'];

for (const surface of SURFACES) {
  const driver = built[surface];
  if (driver === undefined) continue;
  for (const group of GROUPS) {
    const cases = CASES.filter((c) => c.group === group);
    describe(`contract matrix · ${surface} · ${group} runtime`, () => {
      let fx: GroupFixture;
      let rt: SurfaceRuntime | null = null;
      beforeAll(async () => {
        fx = await groupFixture();
        rt = await driver.start(
          {
            name: `${surface}-${group}`,
            agents: cases.flatMap((c) => c.agents(fx, surface)),
            config: sharedConfig(fx),
            env: SHARED_ENV,
          },
          fx.folder,
        );
      }, 120_000);
      afterAll(async () => {
        await rt?.close().catch(() => {});
        await fx?.close();
      }, 60_000);
      for (const c of cases) {
        it(`${c.n}. ${c.title} [${surface}]`, async () => {
          await c.run({ driver, rt: rt as SurfaceRuntime, fx });
        }, 120_000);
      }
    });
  }
}
