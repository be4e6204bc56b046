/**
 * The seed's contract matrix (§13): each of the twelve tests through each execution surface's
 * real entry, on the real runtime (`snotra start` / `snotra mcp` child processes, their own
 * nats-server, SQLite, bubblewrap). One runtime per surface × group (main, restart, tree);
 * every case uses its own agents, so cases stay independent within a shared runtime.
 *
 * Every surface of the seed has its driver here: a surface left out would be a gap in the matrix.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { CASES, SHARED_ENV, sharedConfig, type Group } from './cases/index.ts';
import { chatDriver } from './drivers/chat.ts';
import { goalDriver } from './drivers/goal.ts';
import { mcpDriver } from './drivers/mcp.ts';
import { platformDriver } from './drivers/platform.ts';
import { scheduledDriver } from './drivers/scheduled.ts';
import { subagentDriver } from './drivers/subagent.ts';
import { SURFACES, type SurfaceDriver, type SurfaceName, type SurfaceRuntime } from './drivers/types.ts';
import { groupFixture, type GroupFixture } from './fixture.ts';

const built: Record<SurfaceName, SurfaceDriver> = {
  chat: chatDriver,
  scheduled: scheduledDriver,
  goal: goalDriver,
  platform: platformDriver,
  subagent: subagentDriver,
  mcp: mcpDriver,
};

const GROUPS: readonly Group[] = ['main', 'restart', 'tree'];

for (const surface of SURFACES) {
  const driver = built[surface];
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
