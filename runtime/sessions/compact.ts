import type { Logger } from 'pino';
import { fitTranscript } from '../../actors/model/context-window.ts';
import type { ModelProvider } from '../../actors/model/provider.ts';
import type { SecretResolver } from '../../actors/tools/types.ts';
import type { ModelUsage, TranscriptEntry } from '../../machines/run/types.ts';
import type { Store } from '../../store/index.ts';
import { DEFAULT_CONTEXT_TOKENS } from '../config/schema.ts';
import type { LoadedConfig } from '../config/load.ts';
import { compactionCut, COMPACT_INSTRUCTION, COMPACT_SYSTEM } from './compact-plan.ts';
import { summaryEntry, toHistory } from './history.ts';
import type { Sessions } from './sessions.ts';

/**
 * The share of the model's window above which a session is compacted before its next message
 * (estimated with old tool results elided and without the runtime's preamble, which the step
 * adds: the rest is its room and the answer's).
 */
export const AUTO_COMPACT_AT = 0.85;

/** What a compaction asks for. */
export interface CompactOptions {
  /** How many of the latest exchanges (a user message and what followed) stay as they are; 0 by default. */
  readonly keep?: number;
  /** The surface that asked (audited); `runtime` for an automatic compaction. */
  readonly surface?: string;
}

/** What a compaction did. */
export interface CompactResult {
  readonly sessionId: string;
  /** False when there was nothing new to summarize (nothing changed). */
  readonly compacted: boolean;
  /** The session's entries before this one are compacted now (0: none). */
  readonly throughSeq: number;
  /** How many entries this compaction summarized. */
  readonly summarized: number;
  /** The summary the model is shown in their place (redacted), or null when none. */
  readonly summary: string | null;
  /** The tokens the summarizing model call used, when the provider said. */
  readonly usage: ModelUsage | null;
}

/** A compaction the model could not do (it failed, or answered with no text). */
export class CompactionError extends Error {
  readonly code = 'compaction_failed';
}

/** What the compactor needs from the runtime. */
export interface CompactorDeps {
  readonly loaded: LoadedConfig;
  readonly store: Store;
  readonly sessions: Sessions;
  readonly model: ModelProvider;
  readonly secrets: SecretResolver;
  readonly logger: Logger;
}

/**
 * Compaction of a durable conversation (README "Sessions", the context-window policy's second
 * step, and `/compact`): the session's older entries are summarized by the session agent's model
 * into one summary, shown to the model in their place from then on. The entries stay in the
 * store, marked compacted (`runtime.sessions.messages`); each compaction is audited
 * (`session_compacted`). A session a run holds is not compacted (`SessionBusyError`). The
 * summarizing call's usage is kept with the compaction and counts in the session's usage only
 * (and so in its session budget): a compaction is never inside a run. A call that leaves no
 * compaction (an empty summary, or one refused as it was kept) still counts: its tokens were spent.
 */
export class Compactor {
  constructor(private readonly deps: CompactorDeps) {}

  /** The context window of an agent's model, or null (a scripted model has none). */
  windowOf(agentId: string): number | null {
    const agents = this.deps.loaded.config.agents;
    const model = Object.hasOwn(agents, agentId) ? agents[agentId]?.model : undefined;
    if (model === undefined) return null;
    return model.contextTokens ?? DEFAULT_CONTEXT_TOKENS[model.provider];
  }

  /** Compacts a session now; throws `SessionNotFoundError`, `SessionBusyError` or `CompactionError`. */
  async compact(sessionId: string, options: CompactOptions = {}): Promise<CompactResult> {
    const { store, sessions } = this.deps;
    sessions.assertIdle(sessionId);
    const session = sessions.get(sessionId);
    if (session === null) throw new Error('unreachable: assertIdle checked the session');
    const previous = store.sessions.compactions.latest(sessionId);
    const from = previous?.throughSeq ?? 0;
    const stored = store.sessions.entries(sessionId, session.entries, from);
    const through = compactionCut(stored, options.keep ?? 0, from);
    const unchanged: CompactResult = {
      sessionId,
      compacted: false,
      throughSeq: from,
      summarized: 0,
      summary: previous?.summary ?? null,
      usage: null,
    };
    if (through <= from) return unchanged;

    const older: TranscriptEntry[] = [
      ...(previous === null ? [] : [summaryEntry(previous)]),
      ...toHistory(
        sessionId,
        stored.filter((e) => e.seq < through),
      ),
      { role: 'user', text: COMPACT_INSTRUCTION },
    ];
    const window = this.windowOf(session.agentId);
    const transcript = window === null ? older : fitTranscript(older, window, COMPACT_SYSTEM).transcript;
    let text: string;
    let usage: ModelUsage | null = null;
    try {
      const out = await this.deps.model.step({
        runId: `compact:${sessionId}:${through}`,
        agentId: session.agentId,
        step: 0,
        transcript,
        system: COMPACT_SYSTEM,
        tools: [],
        secrets: this.deps.secrets,
      });
      text = (out.text ?? '').trim();
      usage = out.usage ?? null;
    } catch (err) {
      throw new CompactionError(
        `session ${JSON.stringify(sessionId)}: the model of agent ${JSON.stringify(session.agentId)} could not summarize it: ${store.redactor.redactString((err as Error).message)}`,
        { cause: err },
      );
    }
    if (text === '') {
      // The tokens were spent: they count in the session's usage though nothing is kept.
      store.sessions.compactions.addUnkept(sessionId, through, 'empty_summary', usage);
      throw new CompactionError(
        `session ${JSON.stringify(sessionId)}: the model of agent ${JSON.stringify(session.agentId)} answered the summary request with no text`,
      );
    }
    const summarized = through - from;
    if (!store.sessions.compactions.add(sessionId, through, text, summarized, usage)) {
      store.sessions.compactions.addUnkept(sessionId, through, 'not_kept', usage);
      return unchanged;
    }
    sessions.forget(sessionId);
    const kept = store.sessions.compactions.latest(sessionId);
    store.audit.append({
      kind: 'session_compacted',
      surface: options.surface ?? 'runtime',
      sessionId,
      agentId: session.agentId,
      status: 'compacted',
      detail: {
        throughSeq: through,
        summarized,
        summaryChars: kept?.summary.length ?? 0,
        ...(usage === null ? {} : { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }),
      },
    });
    return {
      sessionId,
      compacted: true,
      throughSeq: through,
      summarized,
      summary: kept?.summary ?? null,
      usage,
    };
  }

  /**
   * Before a message goes to a session (the context-window policy's second step): when the
   * session's history and the message, with old tool results elided, would take more than
   * `AUTO_COMPACT_AT` of the model's window, the older exchanges are summarized, keeping the
   * latest one. Never throws: a
   * failed compaction is logged and the message goes on (older exchanges are then left out).
   */
  async beforeMessage(sessionId: string, agentId: string, text: string): Promise<void> {
    const { sessions, logger } = this.deps;
    try {
      const session = sessions.get(sessionId);
      const window = this.windowOf(agentId);
      if (session === null || session.entries === 0 || window === null) return;
      if (sessions.holder(sessionId) !== null) return;
      const history = sessions.history(sessionId, session.entries);
      const instructions = this.deps.loaded.config.agents[agentId]?.instructions ?? '';
      const fitted = fitTranscript([...history, { role: 'user', text }], window, instructions);
      if (fitted.dropped === 0 && fitted.tokens <= window * AUTO_COMPACT_AT) return;
      const done = await this.compact(sessionId, { keep: 1 });
      if (done.compacted)
        logger.info(
          { sessionId, throughSeq: done.throughSeq, summarized: done.summarized },
          'session compacted to fit the context window',
        );
    } catch (err) {
      logger.warn(
        { sessionId, err: (err as Error).message },
        'session: compaction failed; older exchanges are left out instead',
      );
    }
  }
}
