export { Inspector } from './inspector.ts';
export { ActorTree, DEFAULT_TREE_CAPACITY } from './tree.ts';
export { statePath } from './state-path.ts';
export { isActorEvent, ACTOR_EVENT_TYPES, ActorKind } from './types.ts';
export type {
  ActorEvent,
  ActorEventType,
  ActorFields,
  ActorNode,
  ActorTreeSnapshot,
  BudgetUse,
} from './types.ts';
