import type { ModelStepOutput, TranscriptEntry } from '../../machines/run/types.ts';

/** What a model provider is given for one step. `step` is the 0-based model call of the run. */
export interface ModelStepRequest {
  readonly runId: string;
  readonly agentId: string;
  readonly step: number;
  readonly transcript: readonly TranscriptEntry[];
}

/**
 * A model provider. A step may be asked again for the same `step` after a restart (an in-flight
 * step re-runs on restore), so providers must not assume each call is new.
 */
export interface ModelProvider {
  step(request: ModelStepRequest): Promise<ModelStepOutput>;
}
