import type { ModelStepOutput, Observation, TranscriptEntry } from '../../machines/run/types.ts';
import type { ModelProvider, ModelStepRequest } from './provider.ts';

/** What a scripted step expects to see as the newest observation before it answers. */
export interface StepExpectation {
  readonly kind?: Observation['kind'];
  readonly tool?: string;
  readonly reason?: string;
  /** A substring the observation's JSON must contain. */
  readonly contains?: string;
}

/** One scripted model step: an optional expectation about what came back, and the answer. */
export interface ScriptedStep {
  readonly expect?: StepExpectation;
  readonly respond: ModelStepOutput;
}

/** A scripted model that was asked something it had no step for, or saw what it did not expect. */
export class ScriptedModelError extends Error {
  readonly code: 'unexpected_step' | 'expectation_failed' | 'unconsumed_steps' | 'unknown_script';
  constructor(code: ScriptedModelError['code'], message: string) {
    super(message);
    this.name = 'ScriptedModelError';
    this.code = code;
  }
}

function lastObservation(transcript: readonly TranscriptEntry[]): Observation | null {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const e = transcript[i];
    if (e?.role === 'observation') return e.observation;
    if (e?.role === 'assistant') return null;
  }
  return null;
}

function check(expect: StepExpectation, seen: Observation | null, where: string): void {
  const fail = (what: string): never => {
    throw new ScriptedModelError(
      'expectation_failed',
      `${where}: expected ${what}, saw ${seen === null ? 'no observation' : JSON.stringify(seen)}`,
    );
  };
  if (seen === null) fail(`an observation ${JSON.stringify(expect)}`);
  const s = seen as Observation;
  if (expect.kind !== undefined && s.kind !== expect.kind) fail(`kind ${expect.kind}`);
  if (expect.tool !== undefined && s.tool !== expect.tool) fail(`tool ${expect.tool}`);
  if (expect.reason !== undefined && (!('reason' in s) || s.reason !== expect.reason))
    fail(`reason ${expect.reason}`);
  if (expect.contains !== undefined && !JSON.stringify(s).includes(expect.contains))
    fail(`content containing ${JSON.stringify(expect.contains)}`);
}

/**
 * The scripted model of tests and the demo. Scripts are keyed by agent id; step N of a run gets
 * the script's N-th step (so a step re-asked after a restart gets the same answer). It fails on
 * a step it has no answer for, on an observation it did not expect, and — through
 * `assertConsumed` — on steps nobody asked for.
 */
export class ScriptedModel implements ModelProvider {
  readonly #scripts: ReadonlyMap<string, readonly ScriptedStep[]>;
  readonly #asked = new Map<string, Set<number>>();

  constructor(scripts: Readonly<Record<string, readonly ScriptedStep[]>>) {
    this.#scripts = new Map(Object.entries(scripts));
  }

  async step(request: ModelStepRequest): Promise<ModelStepOutput> {
    const script = this.#scripts.get(request.agentId);
    if (script === undefined) {
      throw new ScriptedModelError(
        'unknown_script',
        `scripted model: no script for agent ${JSON.stringify(request.agentId)}`,
      );
    }
    const where = `scripted model, agent ${request.agentId}, run ${request.runId}, step ${request.step}`;
    const step = script[request.step];
    if (step === undefined)
      throw new ScriptedModelError('unexpected_step', `${where}: the script has only ${script.length} steps`);
    if (step.expect !== undefined) check(step.expect, lastObservation(request.transcript), where);
    let asked = this.#asked.get(request.runId);
    if (asked === undefined) this.#asked.set(request.runId, (asked = new Set()));
    asked.add(request.step);
    return step.respond;
  }

  /** Throws unless every step of the agent's script was asked for in `runId`. */
  assertConsumed(agentId: string, runId: string): void {
    const script = this.#scripts.get(agentId) ?? [];
    const asked = this.#asked.get(runId) ?? new Set<number>();
    const missing = script.map((_, i) => i).filter((i) => !asked.has(i));
    if (missing.length > 0) {
      throw new ScriptedModelError(
        'unconsumed_steps',
        `scripted model, agent ${agentId}, run ${runId}: steps ${missing.join(', ')} were never asked for`,
      );
    }
  }
}
