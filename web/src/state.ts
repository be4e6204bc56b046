// What the page knows, refreshed from the API and kept current by the live feed.
import { ApiError, getJson, paths } from './api.ts';
import type { FeedStatus, Frame } from './events.ts';
import type {
  ActorEvent,
  ApprovalDetails,
  ApprovalRecord,
  ApprovalRequested,
  FeedEvent,
  RunSummary,
  SessionSummary,
} from './wire.ts';

export interface State {
  feed: FeedStatus;
  agents: { id: string; mode: string }[];
  inbox: ApprovalRecord[];
  inboxError: string | null;
  runs: RunSummary[];
  /** The durable conversations (GET /v1/sessions), most recently used first. */
  sessions: SessionSummary[];
  /** The approval.requested events seen live, by approval id: targets, options and the diff. */
  requested: Map<string, ApprovalRequested>;
  /** GET /v1/inbox/:id for approvals not seen live (parked before this window opened). */
  details: Map<string, ApprovalDetails | null>;
  /** Every feed event seen, by run. */
  byRun: Map<string, FeedEvent[]>;
  /** The seq of the last actor.* event (the actor view re-fetches when it changes). */
  actorSeq: number;
}

export const state: State = {
  feed: 'connecting',
  agents: [],
  inbox: [],
  inboxError: null,
  runs: [],
  sessions: [],
  requested: new Map(),
  details: new Map(),
  byRun: new Map(),
  actorSeq: 0,
};

type Listener = (
  what: 'feed' | 'inbox' | 'runs' | 'sessions' | 'agents' | 'actors' | 'goals',
  event?: FeedEvent,
) => void;
const listeners = new Set<Listener>();

export function onChange(l: Listener): void {
  listeners.add(l);
}

function emit(what: Parameters<Listener>[0], event?: FeedEvent): void {
  for (const l of listeners) l(what, event);
}

function message(err: unknown): string {
  return err instanceof ApiError ? `${err.code}: ${err.message}` : String((err as Error).message ?? err);
}

let inboxRequests = 0;
let runsRequests = 0;
let sessionsRequests = 0;

/** Runs whose events are kept (the oldest run's are dropped beyond this). */
const KEPT_RUNS = 500;

export async function refreshInbox(): Promise<void> {
  // Answers may arrive out of order: only the newest request's list is applied.
  const mine = ++inboxRequests;
  try {
    const approvals = (await getJson<{ approvals: ApprovalRecord[] }>(paths.inbox)).approvals;
    await Promise.all(
      approvals
        .filter((a) => !state.requested.has(a.id) && !state.details.has(a.id))
        .map(async (a) => {
          try {
            const item = await getJson<{ details: ApprovalDetails | null }>(paths.approval(a.id));
            state.details.set(a.id, item.details);
          } catch {
            state.details.set(a.id, null);
          }
        }),
    );
    if (mine !== inboxRequests) return;
    state.inbox = approvals;
    state.inboxError = null;
  } catch (err) {
    if (mine !== inboxRequests) return;
    state.inboxError = message(err);
  }
  emit('inbox');
}

export async function refreshRuns(): Promise<void> {
  const mine = ++runsRequests;
  try {
    const runs = (await getJson<{ runs: RunSummary[] }>(paths.runs)).runs;
    if (mine !== runsRequests) return;
    state.runs = [...runs].sort((a, b) => b.updatedAt - a.updatedAt);
  } catch {
    // The runs view shows what it had; the next event refreshes again.
  }
  emit('runs');
}

export async function refreshSessions(): Promise<void> {
  const mine = ++sessionsRequests;
  try {
    const sessions = (await getJson<{ sessions: SessionSummary[] }>(paths.sessions)).sessions;
    if (mine !== sessionsRequests) return;
    state.sessions = [...sessions].sort((a, b) => b.updatedAt - a.updatedAt);
  } catch {
    // The list shows what it had; the next run event refreshes again.
  }
  emit('sessions');
}

export async function refreshAgents(): Promise<void> {
  try {
    state.agents = (await getJson<{ agents: { id: string; mode: string }[] }>(paths.agents)).agents;
  } catch {
    state.agents = [];
  }
  emit('agents');
}

export function setFeed(s: FeedStatus): void {
  if (state.feed === s) return;
  state.feed = s;
  emit('feed');
  // After a gap the lists may be stale.
  if (s === 'live') {
    void refreshInbox();
    void refreshRuns();
    void refreshSessions();
  }
}

const INBOX_EVENTS = new Set(['approval.requested', 'approval.resolved', 'run.parked']);
const RUN_EVENTS = new Set(['run.started', 'run.parked', 'run.completed', 'run.failed', 'approval.resolved']);

const SESSION_EVENTS = new Set(['run.started', 'run.completed', 'run.failed']);

export function applyFrame(f: Frame): void {
  if (f.type.startsWith('actor.')) {
    const e = f.data as ActorEvent;
    state.actorSeq = e.seq ?? state.actorSeq + 1;
    emit('actors');
    // A goal's node changes with its status, parked, iteration and usage: the Goals view re-reads.
    if (e.actor?.kind === 'goal') emit('goals');
    return;
  }
  const e = f.data as FeedEvent;
  if (typeof e !== 'object' || e === null || typeof e.runId !== 'string') return;
  const list = state.byRun.get(e.runId) ?? [];
  list.push(e);
  state.byRun.set(e.runId, list);
  if (state.byRun.size > KEPT_RUNS) state.byRun.delete(state.byRun.keys().next().value as string);
  if (e.type === 'approval.requested') state.requested.set(e.approvalId, e);
  if (e.type === 'approval.resolved') {
    state.requested.delete(e.approvalId);
    state.details.delete(e.approvalId);
  }
  emit('feed', e);
  if (INBOX_EVENTS.has(e.type)) void refreshInbox();
  if (RUN_EVENTS.has(e.type)) void refreshRuns();
  // A top-level run starting or ending changes its session's title, count and last activity.
  if (e.parentRunId === null && SESSION_EVENTS.has(e.type)) void refreshSessions();
}
