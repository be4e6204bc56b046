import type { Observation, ProposedCall, TranscriptEntry } from '../../machines/run/types.ts';
import { argumentsText, observationText } from './transcript.ts';

/**
 * The context-window policy (README "Sessions"): a model step's history is fitted to the model's
 * `contextTokens` before the request goes out, by one documented order.
 *
 * 1. The oldest tool results are elided first, each to a one-line stub
 *    (`[elided: read_file src/a.ts, 12 kB]`). Results the model has not answered yet (those after
 *    the last assistant turn) are kept.
 * 2. Then the oldest exchanges (a user message and what followed it) before the last user message
 *    are dropped, replaced by one line saying how many entries were left out.
 *
 * The system prompt and the last user message are never dropped or changed; a call and its
 * result stay paired (an elided result keeps its call id). Tokens are estimated as one per four
 * characters (UTF-16 units), which errs high for English text and code. Pure.
 */

/** How many characters count as one token in the estimate. */
export const CHARS_PER_TOKEN = 4;

/** What fitting did: the entries to send and how many were elided or left out. */
export interface FittedTranscript {
  readonly transcript: readonly TranscriptEntry[];
  readonly elided: number;
  readonly dropped: number;
  /** The estimate of what is sent (system prompt included). */
  readonly tokens: number;
}

/** The estimated tokens of a text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** The estimated tokens of one transcript entry as a provider sends it. */
export function entryTokens(e: TranscriptEntry): number {
  if (e.role === 'user') return estimateTokens(e.text) + 4;
  if (e.role === 'observation') return estimateTokens(observationText(e.observation)) + 8;
  let n = estimateTokens(e.text ?? '') + 4;
  for (const c of e.calls ?? []) n += estimateTokens(c.tool) + estimateTokens(argumentsText(c.args)) + 8;
  return n;
}

const TARGET_ARGS = ['path', 'command', 'url', 'channel', 'pattern', 'task'] as const;

/** The stub an elided result is replaced by: the tool, its target, the size of what was cut. */
export function elisionStub(o: Observation, call: ProposedCall | undefined): string {
  const bytes = Buffer.byteLength(observationText(o), 'utf8');
  const size = bytes < 10_000 ? `${(bytes / 1000).toFixed(1)} kB` : `${Math.round(bytes / 1000)} kB`;
  const args = (call?.args ?? {}) as Record<string, unknown>;
  const key = TARGET_ARGS.find((k) => typeof args[k] === 'string');
  const raw = key === undefined ? '' : String(args[key]).replace(/\s+/g, ' ');
  const target = raw.length > 80 ? `${raw.slice(0, 79)}…` : raw;
  return `[elided: ${o.tool}${target === '' ? '' : ` ${target}`}, ${size}]`;
}

/** Fits a step's transcript into `contextTokens` (see the module comment). */
export function fitTranscript(
  entries: readonly TranscriptEntry[],
  contextTokens: number,
  system = '',
): FittedTranscript {
  const out = [...entries];
  const cost = out.map(entryTokens);
  let total = estimateTokens(system) + cost.reduce((a, b) => a + b, 0);
  if (total <= contextTokens) return { transcript: entries, elided: 0, dropped: 0, tokens: total };

  // 1. Elide the oldest answered tool results.
  let lastAssistant = -1;
  let lastUser = -1;
  const calls = new Map<string, ProposedCall>();
  out.forEach((e, i) => {
    if (e.role === 'assistant') lastAssistant = i;
    if (e.role === 'user') lastUser = i;
  });
  let elided = 0;
  for (let i = 0; i < lastAssistant && total > contextTokens; i++) {
    const e = out[i] as TranscriptEntry;
    if (e.role === 'assistant') for (const c of e.calls ?? []) calls.set(c.id, c);
    if (e.role !== 'observation') continue;
    const o = e.observation;
    const stub = elisionStub(o, calls.get(o.callId));
    if (o.kind === 'tool.result' && o.content === stub) continue;
    const next: TranscriptEntry = {
      role: 'observation',
      observation: { kind: 'tool.result', callId: o.callId, tool: o.tool, content: stub },
    };
    const c = entryTokens(next);
    if (c >= (cost[i] as number)) continue;
    total += c - (cost[i] as number);
    out[i] = next;
    cost[i] = c;
    elided++;
  }
  if (total <= contextTokens) return { transcript: out, elided, dropped: 0, tokens: total };

  // 2. Leave out the oldest whole exchanges before the last user message.
  const starts = out.flatMap((e, i) => (e.role === 'user' && i < lastUser ? [i] : []));
  let cut = 0;
  let saved = 0;
  for (const start of starts) {
    if (total - saved <= contextTokens) break;
    const end = out.findIndex((e, i) => i > start && e.role === 'user');
    for (let i = cut; i < end; i++) saved += cost[i] as number;
    cut = end;
  }
  if (cut === 0) return { transcript: out, elided, dropped: 0, tokens: total };
  const note: TranscriptEntry = {
    role: 'user',
    text: `[${cut} earlier entries of this conversation were left out to fit the context window]`,
  };
  const kept = [note, ...out.slice(cut)];
  return { transcript: kept, elided, dropped: cut, tokens: total - saved + entryTokens(note) };
}
