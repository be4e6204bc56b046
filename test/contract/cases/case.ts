import { expect } from 'vitest';
import { assertLifecycles } from '../../support/lifecycle.ts';
import type {
  CaseAgent,
  CaseModel,
  ScriptStep,
  SurfaceDriver,
  SurfaceName,
  SurfaceRuntime,
} from '../drivers/types.ts';
import { type GroupFixture } from '../fixture.ts';
import { auditOf, readState, waitForStatus } from '../state.ts';

/** What a case gets: its surface's driver and runtime, the group's files and servers. */
export interface CaseContext {
  readonly driver: SurfaceDriver;
  readonly rt: SurfaceRuntime;
  readonly fx: GroupFixture;
}

/** Which runtime a case shares: `main` (no restart), `restart` (tests 7, 8), `tree` (test 12 closes it). */
export type Group = 'main' | 'restart' | 'tree';

/** One of the seed's twelve contract tests, written once for every surface. */
export interface ContractCase {
  readonly n: number;
  readonly title: string;
  readonly group: Group;
  /** The agents the case needs (the same for every surface unless the surface changes what applies). */
  agents(fx: GroupFixture, surface: SurfaceName): CaseAgent[];
  /** How the case applies to a surface where it differs (shown in the README table). */
  readonly note?: Partial<Record<SurfaceName, string>>;
  run(ctx: CaseContext): Promise<void>;
}

export const scripted = (steps: ScriptStep[]): CaseModel => ({ kind: 'scripted', steps });

export function started(stateDir: string, runId: string, tool?: string) {
  return auditOf(stateDir, runId).filter(
    (e) => e.kind === 'started' && (tool === undefined || e.tool === tool),
  );
}

export async function completed(ctx: CaseContext, runId: string, text?: string) {
  const run = await waitForStatus(ctx.fx.folder.stateDir, runId, ['completed', 'failed', 'denied']);
  expect(run.status, `run ${runId}: ${JSON.stringify(run.outcome)}`).toBe('completed');
  if (text !== undefined) expect(run.outcome?.text).toBe(text);
  readState(ctx.fx.folder.stateDir, (s) => assertLifecycles(s, runId));
  if (run.outcome !== null) await ctx.rt.settled?.(runId, run.outcome);
  return run;
}
