// The sidecar API of this page's own origin. The page holds no token: the desktop shell
// (`snotra app`) adds the Authorization header to this origin's /v1 requests; a browser opened
// by `snotra open` sends its HttpOnly session cookie (same origin only). Paths are fixed
// here; the page never takes an endpoint from its URL, a message or storage.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function answer<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    throw new ApiError(res.status, 'bad_answer', `the sidecar answered ${res.status} with no JSON`);
  }
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, e?.code ?? 'error', e?.message ?? `HTTP ${res.status}`);
  }
  return body as T;
}

export async function getJson<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { cache: 'no-store', credentials: 'same-origin' }));
}

export async function postJson<T>(
  path: string,
  body: unknown,
  method: 'POST' | 'PATCH' = 'POST',
): Promise<T> {
  return answer<T>(
    await fetch(path, {
      method,
      cache: 'no-store',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

const seg = encodeURIComponent;

export const paths = {
  agents: '/v1/agents',
  inbox: '/v1/inbox',
  approval: (id: string) => `/v1/inbox/${seg(id)}`,
  decision: (id: string) => `/v1/inbox/${seg(id)}/decision`,
  chat: (agent: string) => `/v1/chat/${seg(agent)}/messages`,
  runs: '/v1/runs',
  run: (id: string) => `/v1/runs/${seg(id)}`,
  audit: (id: string) => `/v1/runs/${seg(id)}/audit`,
  actors: '/v1/actors',
  machine: (name: string) => `/v1/machines/${seg(name)}`,
  machineSvg: (name: string) => `/v1/machines/${seg(name)}/svg`,
  conversation: (id: string) => `/v1/runs/${seg(id)}/conversation`,
  checkpoints: (runId: string) => `/v1/runs/${seg(runId)}/checkpoints`,
  rewind: (runId: string) => `/v1/runs/${seg(runId)}/rewind`,
  provenance: (runId: string, callId: string) => `/v1/runs/${seg(runId)}/calls/${seg(callId)}/provenance`,
  sessions: '/v1/sessions',
  session: (id: string) => `/v1/sessions/${seg(id)}`,
  sessionMessages: (id: string) => `/v1/sessions/${seg(id)}/messages`,
  goals: '/v1/goals',
  goal: (id: string, action: GoalAction) => `/v1/goals/${seg(id)}/${action}`,
  events: '/v1/events',
} as const;

export type Decision =
  | { readonly decision: 'approve'; readonly scope: 'once' | 'session' | 'always'; readonly reason?: string }
  | { readonly decision: 'deny'; readonly reason?: string };

export function decide(approvalId: string, d: Decision): Promise<unknown> {
  return postJson(paths.decision(approvalId), d);
}

export type GoalAction = 'start' | 'pause' | 'resume' | 'cancel';

/** A human's control of a goal; the body is an empty JSON object. */
export function goalAction(goalId: string, action: GoalAction): Promise<unknown> {
  return postJson(paths.goal(goalId, action), {});
}

/** A session's new title (`PATCH /v1/sessions/:id`). */
export function renameSession(sessionId: string, title: string): Promise<unknown> {
  return postJson(paths.session(sessionId), { title }, 'PATCH');
}
