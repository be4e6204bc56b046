import type { Inspector } from './inspector.ts';
import type { ActorEvent, ActorTreeSnapshot } from './types.ts';

/** `runtime.node.inspect`: the live actor tree (agents → runs → sub-agent runs → approvals). */
export class InspectFacade {
  readonly #inspector: Inspector;

  constructor(inspector: Inspector) {
    this.#inspector = inspector;
  }

  /** The live actor tree: ids, states and budgets only. */
  actors(): ActorTreeSnapshot {
    return this.#inspector.snapshot();
  }

  /** Listens to the changes of the live actor tree (`actor.*` events); returns the removal. */
  onActorEvent(listener: (e: ActorEvent) => void): () => void {
    return this.#inspector.on(listener);
  }
}
