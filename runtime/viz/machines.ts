import type { AnyStateMachine } from 'xstate';
import { agentMachine } from '../../machines/agent/machine.ts';
import { approvalMachine } from '../../machines/approval/machine.ts';
import { goalMachine } from '../../machines/goal/machine.ts';
import { runMachine } from '../../machines/run/machine.ts';
import { toolCallMachine } from '../../machines/tool-call/machine.ts';
import { machineGraph, type MachineGraph } from './graph.ts';

/** Every machine of the runtime, by the name `snotra viz` and `GET /v1/machines/:name` use. */
export const MACHINES: Readonly<Record<string, AnyStateMachine>> = {
  run: runMachine,
  agent: agentMachine,
  approval: approvalMachine,
  'tool-call': toolCallMachine,
  goal: goalMachine,
};

/** The graph of a machine by name, or null for an unknown name. */
export function graphOf(name: string): MachineGraph | null {
  const machine = Object.hasOwn(MACHINES, name) ? MACHINES[name] : undefined;
  return machine === undefined ? null : machineGraph(name, machine);
}
