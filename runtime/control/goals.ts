import { userInfo } from 'node:os';
import type { GoalAction, GoalControl, GoalRecord, IterationRecord } from '../../store/index.ts';
import { descendsFrom } from './ancestry.ts';
import { openLocalStore, runtimePid } from './local-store.ts';
import { notifyRuntime } from './socket.ts';

export type { GoalAction, GoalControl, GoalRecord, IterationRecord };

/** A request from a process the runtime started (an agent's shell): refused. */
export class AgentGoalControlError extends Error {
  readonly code = 'goal_control_from_agent_process';
}

/** The stored goals of a state dir, and the iterations of one goal's current epoch. */
export function readGoals(stateDir: string): GoalRecord[] {
  const store = openLocalStore(stateDir, true);
  try {
    return store.goals.list();
  } finally {
    store.close();
  }
}

/** One goal and the iterations of its current epoch, or null when it was never started. */
export function readGoal(
  stateDir: string,
  goalId: string,
): { goal: GoalRecord; iterations: IterationRecord[] } | null {
  const store = openLocalStore(stateDir, true);
  try {
    const goal = store.goals.get(goalId);
    if (goal === null) return null;
    return { goal, iterations: store.goals.iterations(goalId, goal.epoch) };
  } finally {
    store.close();
  }
}

/**
 * A human's request for a goal as the local user (the CLI surface): refused when this process
 * descends from the runtime (an agent's tool). The request is written to the store (durably);
 * a running runtime is told to apply it and this waits up to `waitMs` for the result. When no
 * runtime runs, the request waits in the store and is applied at the runtime's next start.
 */
export async function requestGoalControl(
  stateDir: string,
  goalId: string,
  action: GoalAction,
  waitMs = 10_000,
): Promise<{ control: GoalControl; notified: boolean; user: string }> {
  const pid = runtimePid(stateDir);
  if (pid !== null && descendsFrom(pid)) {
    throw new AgentGoalControlError(
      'goals cannot be controlled from a process started by the runtime (an agent’s tool)',
    );
  }
  const user = `local:${userInfo().username}`;
  let seq: number;
  {
    const store = openLocalStore(stateDir, false);
    try {
      seq = store.goals.requestControl(goalId, action, user);
    } finally {
      store.close();
    }
  }
  const notified = await notifyRuntime(stateDir, { v: 1, type: 'goal_control', id: goalId });
  const end = Date.now() + (notified ? waitMs : 0);
  for (;;) {
    const store = openLocalStore(stateDir, true);
    let control: GoalControl | null;
    try {
      control = store.goals.control(seq);
    } finally {
      store.close();
    }
    if (control === null) throw new Error(`goal request ${seq} vanished from the store`);
    if (control.appliedAt !== null || Date.now() >= end) return { control, notified, user };
    await new Promise((r) => setTimeout(r, 50));
  }
}
