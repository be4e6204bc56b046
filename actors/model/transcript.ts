import type { Observation, ProposedCall, TranscriptEntry } from '../../machines/run/types.ts';

/** A tool result as a provider sends it back: the call it answers, its text, whether it failed. */
export interface ToolResultTurn {
  readonly callId: string;
  readonly text: string;
  readonly isError: boolean;
}

/** A transcript regrouped the way chat APIs want it. */
export type Turn =
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'assistant'; readonly text: string; readonly calls: readonly ProposedCall[] }
  | { readonly kind: 'results'; readonly results: readonly ToolResultTurn[] };

/** The text the model reads for an observation. */
export function observationText(o: Observation): string {
  switch (o.kind) {
    case 'tool.result':
      return typeof o.content === 'string' ? o.content : (JSON.stringify(o.content) ?? 'null');
    case 'tool.denied':
      return `denied by the runtime's policy (${o.reason}): ${o.message}`;
    case 'tool.failed':
      return `the tool failed: ${o.message}`;
    case 'tool.interrupted':
      return `interrupted: ${o.message}`;
  }
}

/**
 * Regroups a transcript into turns: each assistant turn with calls is followed by one results
 * turn answering every call in order (a call with no observation gets a "not run" result, so
 * the history stays valid for APIs that require an answer per call).
 */
export function toTurns(transcript: readonly TranscriptEntry[]): Turn[] {
  const turns: Turn[] = [];
  let pending: { calls: readonly ProposedCall[]; seen: Map<string, ToolResultTurn> } | null = null;
  const flush = () => {
    if (pending === null) return;
    const { calls, seen } = pending;
    turns.push({
      kind: 'results',
      results: calls.map(
        (c) => seen.get(c.id) ?? { callId: c.id, text: 'the call was not run', isError: true },
      ),
    });
    pending = null;
  };
  for (const e of transcript) {
    if (e.role === 'observation') {
      const o = e.observation;
      pending?.seen.set(o.callId, {
        callId: o.callId,
        text: observationText(o),
        isError: o.kind !== 'tool.result',
      });
      continue;
    }
    flush();
    if (e.role === 'user') turns.push({ kind: 'user', text: e.text });
    else {
      const calls = e.calls ?? [];
      turns.push({ kind: 'assistant', text: e.text ?? '', calls });
      if (calls.length > 0) pending = { calls, seen: new Map() };
    }
  }
  flush();
  return turns;
}

/** The arguments of a proposed call as the JSON text a provider echoes back. */
export function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  return JSON.stringify(args ?? {}) ?? '{}';
}

/**
 * Parses a call's accumulated JSON arguments. Empty text means no arguments (`{}`); text that
 * is not JSON is kept as the raw string, which the policy then denies as `invalid_arguments`
 * (the model sees why and can try again).
 */
export function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
