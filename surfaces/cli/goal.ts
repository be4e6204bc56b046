import { resolve } from 'node:path';
import {
  type GoalRecord,
  type IterationRecord,
  NoStateError,
  readGoal,
  readGoals,
  requestGoalControl,
  resolveConfig,
} from '../../runtime/index.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';
import { parseStateArgs } from './state-dir.ts';

const USAGE =
  'usage: snotra goal list [--json]\n' +
  '       snotra goal show ID [--json]\n' +
  '       snotra goal start ID | pause ID | resume ID | cancel ID [--json]\n' +
  '  (all take --state-dir D or --config F)';

const ACTIONS = ['start', 'pause', 'resume', 'cancel'] as const;

function usedText(g: GoalRecord): string {
  const limit = (k: 'modelCalls' | 'toolCalls' | 'wallTimeMs' | 'tokens' | 'costUsd') =>
    g.budget[k] === undefined ? '' : `/${g.budget[k]}`;
  // Tokens and cost when there are some, or a limit on them.
  const tokens = g.used.tokens ?? 0;
  const cost = g.used.costUsd ?? 0;
  const usage =
    (tokens > 0 || g.budget.tokens !== undefined ? `, tokens ${tokens}${limit('tokens')}` : '') +
    (cost > 0 || g.budget.costUsd !== undefined ? `, cost ${cost.toFixed(4)}${limit('costUsd')} USD` : '');
  return `model ${g.used.modelCalls}${limit('modelCalls')}, tools ${g.used.toolCalls}${limit('toolCalls')}, ${g.used.wallTimeMs}${limit('wallTimeMs')} ms${usage}`;
}

function statusText(g: GoalRecord): string {
  if (g.status === 'active' && g.parked) return 'active (parked: waiting for an approval in the Inbox)';
  return g.stopReason === null ? g.status : `${g.status} (${g.stopReason})`;
}

function goalLine(g: GoalRecord): string {
  return oneLine(
    `${g.goalId}  ${statusText(g)}  agent=${g.agentId}  iteration ${g.iteration}/${g.maxIterations}  ${usedText(g)}`,
    2000,
  );
}

function iterationLine(it: IterationRecord): string {
  const usage =
    it.usage === null
      ? ''
      : `  model ${it.usage.modelCalls}, tools ${it.usage.toolCalls}, ${it.usage.wallTimeMs} ms${it.usage.tokens === undefined ? '' : `, tokens ${it.usage.tokens}`}`;
  return oneLine(
    `  #${it.iteration}  ${it.status}${it.outcome ? ` (${it.outcome})` : ''}  run=${it.runId}${usage}`,
    2000,
  );
}

/**
 * `snotra goal list|show|start|pause|resume|cancel`: the goal loops as the local user sees and
 * controls them. Reads go to the store; a control is a request written to the store and applied
 * by the running runtime at once, or at its next start when none runs.
 */
export async function goalCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseStateArgs(rest, USAGE);
  // The config names the goals; with only --state-dir the stored goals are all there is.
  const configured =
    values['state-dir'] !== undefined && values.config === undefined
      ? null
      : resolveConfig(values.config, cwd).config;
  const stateDir =
    values['state-dir'] !== undefined ? resolve(cwd, values['state-dir']) : (configured?.stateDir as string);
  const goalIds = configured?.surfaces.goalLoops.map((g) => g.id) ?? null;
  const stored = (): GoalRecord[] => {
    try {
      return readGoals(stateDir);
    } catch (err) {
      if (err instanceof NoStateError) return [];
      throw err;
    }
  };
  switch (action) {
    case 'list': {
      const goals = stored();
      const ids = [...new Set([...(goalIds ?? []), ...goals.map((g) => g.goalId)])].sort();
      for (const id of ids) {
        const g = goals.find((x) => x.goalId === id);
        if (values.json) io.stdout(`${JSON.stringify(g ?? { goalId: id, status: 'not_started' })}\n`);
        else io.stdout(`${g === undefined ? `${id}  not_started` : goalLine(g)}\n`);
      }
      if (!values.json && ids.length === 0) io.stdout('no goal loops (configure surfaces.goalLoops)\n');
      return ExitCode.ok;
    }
    case 'show': {
      const id = positionals[0];
      if (id === undefined) throw new UsageError(`goal show needs a goal id\n${USAGE}`);
      let found: ReturnType<typeof readGoal> = null;
      try {
        found = readGoal(stateDir, id);
      } catch (err) {
        if (!(err instanceof NoStateError)) throw err;
      }
      if (found === null) {
        if (goalIds?.includes(id)) {
          io.stdout(
            values.json
              ? `${JSON.stringify({ goalId: id, status: 'not_started' })}\n`
              : `${id}  not_started\n`,
          );
          return ExitCode.ok;
        }
        throw new CommandFailure('not_found', `no goal ${JSON.stringify(id)}`);
      }
      if (values.json) io.stdout(`${JSON.stringify({ ...found.goal, iterations: found.iterations })}\n`);
      else {
        io.stdout(`${goalLine(found.goal)}\n  objective: ${oneLine(found.goal.objective, 2000)}\n`);
        if (found.goal.evidence !== null)
          io.stdout(`  evidence (claimed by the model): ${oneLine(found.goal.evidence, 4000)}\n`);
        for (const it of found.iterations) io.stdout(`${iterationLine(it)}\n`);
      }
      return ExitCode.ok;
    }
    default: {
      if (!(ACTIONS as readonly (string | undefined)[]).includes(action)) throw new UsageError(USAGE);
      const verb = action as (typeof ACTIONS)[number];
      const id = positionals[0];
      if (id === undefined || positionals.length > 1)
        throw new UsageError(`goal ${verb} needs one goal id\n${USAGE}`);
      if (goalIds !== null && !goalIds.includes(id))
        throw new CommandFailure('not_found', `no goal ${JSON.stringify(id)} in surfaces.goalLoops`);
      const { control, notified } = await requestGoalControl(stateDir, id, verb);
      const applied = control.appliedAt !== null;
      if (applied && control.result !== 'ok')
        throw new CommandFailure('goal_unchanged', `goal ${id}: ${verb} changed nothing (${control.result})`);
      const out = { goalId: id, action: verb, applied, result: control.result, runtimeNotified: notified };
      io.stdout(
        values.json
          ? `${JSON.stringify(out)}\n`
          : applied
            ? `${id}: ${verb} applied\n`
            : `${id}: ${verb} requested (no runtime running: applied at its next start)\n`,
      );
      return ExitCode.ok;
    }
  }
}
