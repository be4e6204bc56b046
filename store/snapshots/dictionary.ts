/**
 * The preset DEFLATE dictionary of stored run snapshots (codec tag 0x53, schema version 8): the
 * JSON of typical persisted run-actor snapshots (machines/run), so a stored snapshot costs only
 * what differs from them (its ids, texts and timestamps). The values are generic examples of
 * each field, not any one deployment's. FROZEN: rows written with this tag decode only with
 * these exact bytes (a test pins their sha256); a better dictionary needs a new tag.
 */

const budget = { modelCalls: 20, toolCalls: 50, wallTimeMs: 600000 };

/** The input fields every run context starts with (RunInput). */
function input(message: string, interaction: string, surface: string): Record<string, unknown> {
  return {
    runId: 'assistant:msg-0001',
    agentId: 'assistant',
    sessionId: 'session:cli-0001',
    taskId: null,
    parentRunId: null,
    surface,
    interaction,
    message,
    budget,
    startedAt: 1700000000000,
  };
}

const pathTarget = {
  argument: 'path',
  input: 'notes/plan.md',
  resolved: '/home/user/project/notes/plan.md',
  root: 'project',
  access: 'read-write',
};

const writeCall = {
  id: 'call_1',
  tool: 'write_file',
  args: { path: 'notes/plan.md', content: 'Review the open pull requests.\n' },
};

const readCall = { id: 'call_0', tool: 'read_file', args: { path: 'README.md' } };

const completed = {
  status: 'done',
  output: { status: 'completed', reason: 'final_answer', text: 'Done.' },
  value: 'completed',
  historyValue: {},
  context: {
    ...input('summarize the README and write the open items to notes', 'attended', 'cli'),
    transcript: [
      { role: 'user', text: 'summarize the README and write the open items to notes' },
      { role: 'assistant', calls: [readCall] },
      {
        role: 'observation',
        observation: { kind: 'tool.result', callId: 'call_0', tool: 'read_file', content: '# Project' },
      },
      { role: 'assistant', text: 'I will write the notes now.', calls: [writeCall] },
      {
        role: 'observation',
        observation: {
          kind: 'tool.denied',
          callId: 'call_1',
          tool: 'write_file',
          reason: 'approval_denied',
          message: 'not now',
        },
      },
      {
        role: 'observation',
        observation: { kind: 'tool.failed', callId: 'call_1', tool: 'write_file', message: 'failed' },
      },
      { role: 'assistant', text: 'Done.' },
    ],
    calls: [],
    cursor: 0,
    decision: null,
    approvalId: null,
    used: { modelCalls: 3, toolCalls: 2 },
    steps: 3,
    denials: {},
    outcome: { status: 'completed', reason: 'final_answer', text: 'Done.' },
  },
  children: {},
};

const failed = {
  status: 'done',
  output: { status: 'failed', reason: 'budget_tool_calls', message: 'the run used its tool call budget' },
  value: 'failed',
};

const running = {
  status: 'active',
  value: { running: { acting: 'executing' } },
  historyValue: {},
  children: {
    '0.run.running.stepping': { snapshot: { status: 'active' }, src: 'modelStep', syncSnapshot: false },
    '0.run.running.recording': { snapshot: { status: 'active' }, src: 'recordStep', syncSnapshot: false },
    '0.run.running.acting.deciding': { snapshot: { status: 'active' }, src: 'decide', syncSnapshot: false },
    '0.run.running.acting.executing': {
      snapshot: { status: 'active' },
      src: 'executeTool',
      syncSnapshot: false,
    },
  },
  context: { decision: { decision: 'allow', reason: 'rule_allow', risk: 'read' }, value: 'resuming' },
};

const waiting = {
  status: 'active',
  value: 'waiting_for_approval',
  historyValue: {},
  context: {
    ...input('send the release notes to the team channel', 'unattended', 'scheduled'),
    taskId: 'nightly-report',
    sessionId: 'task:nightly-report',
    transcript: [
      { role: 'user', text: 'send the release notes to the team channel' },
      { role: 'assistant', calls: [{ id: 'call_1', tool: 'send_message', args: { channel: '#general' } }] },
    ],
    calls: [{ id: 'call_1', tool: 'send_message', args: { channel: '#general' } }],
    cursor: 0,
    decision: {
      decision: 'approval-required',
      reason: 'mode_ask',
      risk: 'external',
      rule: { id: 'mode.ask', source: 'mode' },
      targets: [pathTarget],
      humanRequired: true,
      step: 5,
    },
    approvalId: 'apr:assistant:msg-0001:call_1',
    used: { modelCalls: 1, toolCalls: 0 },
    steps: 1,
    denials: {},
    outcome: null,
  },
  children: {
    '0.run.waiting_for_approval': {
      snapshot: { status: 'done', output: { approvalId: 'apr:assistant:msg-0001:call_1' } },
      src: 'openApproval',
      syncSnapshot: false,
    },
  },
};

/** The dictionary bytes: the most common content last (closest, so cheapest to refer to). */
export const SNAPSHOT_DICTIONARY: Buffer = Buffer.from(
  [failed, running, completed, waiting].map((snapshot) => JSON.stringify(snapshot)).join(''),
  'utf8',
);
