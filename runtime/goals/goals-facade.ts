import type { GoalAction, GoalControl, GoalRecord, Store } from '../../store/index.ts';
import type { GoalView, ReadModels } from '../read/read-models.ts';
import type { GoalHost } from './goal-host.ts';

/** What {@link GoalsFacade} hands its calls to. */
export interface GoalsFacadeDeps {
  readonly store: Store;
  readonly goals: GoalHost;
  readonly goalListeners: Set<(goal: GoalRecord) => void>;
  readonly read: ReadModels;
}

/** `runtime.goals`: the configured goals, a human's control of one, and their changes. */
export class GoalsFacade {
  readonly #deps: GoalsFacadeDeps;

  constructor(deps: GoalsFacadeDeps) {
    this.#deps = deps;
  }

  /** Every configured goal with its stored state (null when never started), and its iterations. */
  list(): GoalView[] {
    return this.#deps.read.goals();
  }

  /**
   * A human's request for a goal (`start`, `pause`, `resume`, `cancel`) from an authenticated
   * in-process surface: recorded durably, applied at once; returns the applied request.
   */
  control(goalId: string, action: GoalAction, by: string): GoalControl {
    const { store, goals } = this.#deps;
    const seq = store.goals.requestControl(goalId, action, by);
    goals.applyControls();
    return store.goals.control(seq) as GoalControl;
  }

  /** Listens to changes of every goal's stored state (status, iteration, usage). Returns the removal. */
  onChange(listener: (goal: GoalRecord) => void): () => void {
    const { goalListeners } = this.#deps;
    goalListeners.add(listener);
    return () => goalListeners.delete(listener);
  }
}
