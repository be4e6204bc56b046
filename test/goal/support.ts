import type { ModelProvider, ModelStepRequest } from '../../actors/model/provider.ts';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { ModelStepOutput } from '../../machines/run/types.ts';

/** The scripted model, with the tool names it was offered in each run (to check what a run may call). */
export class OfferedTools implements ModelProvider {
  readonly scripted: ScriptedModel;
  readonly offered = new Map<string, string[]>();

  constructor(scripts: Readonly<Record<string, readonly ScriptedStep[]>>) {
    this.scripted = new ScriptedModel(scripts);
  }

  step(request: ModelStepRequest): Promise<ModelStepOutput> {
    this.offered.set(
      request.runId,
      (request.tools ?? []).map((t) => t.name),
    );
    return this.scripted.step(request);
  }
}

/** A scripted step that calls one tool. */
export function call(id: string, tool: string, args: unknown, expect?: ScriptedStep['expect']): ScriptedStep {
  return { ...(expect ? { expect } : {}), respond: { kind: 'calls', calls: [{ id, tool, args }] } };
}

/** A scripted final answer. */
export function final(text: string, expect?: ScriptedStep['expect']): ScriptedStep {
  return { ...(expect ? { expect } : {}), respond: { kind: 'final', text } };
}
