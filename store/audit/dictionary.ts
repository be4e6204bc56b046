import { eventBody } from './chain.ts';
import type { HashedFields } from './chain.ts';

/**
 * The preset DEFLATE dictionary of `audit_log` rows (codec tag 0x41, schema version 8): the
 * bodies of a typical tool call's lifecycle (proposed → policy_decided → approval_requested →
 * approval_resolved → started → completed), in the exact form rows store, so a stored row costs
 * only what differs (ids, timestamps, arguments). Generic example values, not any one
 * deployment's. FROZEN: rows written with this tag decode only with these exact bytes (a test
 * pins their sha256); a better dictionary needs a new tag.
 */

const at = 1700000000000;
const ids = ['session:cli-0001', 'assistant', 'cli', 'assistant:msg-0001', 'call_1'] as const;

function event(
  seq: number,
  kind: string,
  tool: string,
  decided: readonly [
    risk: string | null,
    ruleId: string | null,
    resource: string | null,
    status: string | null,
  ],
  detail: unknown,
): HashedFields {
  return [1, seq, at + seq, kind, ...ids, tool, ...decided, null, JSON.stringify(detail)];
}

const path = '/home/user/project/notes/todo.md';
const target = {
  argument: 'path',
  input: 'notes/todo.md',
  resolved: path,
  root: 'project',
  access: 'read-write',
};
const idempotencyKey = 'call:assistant:msg-0001:call_1';
const approval = {
  approvalId: 'apr:assistant:msg-0001:call_1',
  taskId: null,
  parentAgentId: null,
};

/** A row of a write that needed approval, then a row of an external call: the common rows. */
const rows: HashedFields[][] = [
  [
    event(1, 'proposed', 'write_file', [null, null, null, null], {
      args: { path: 'notes/todo.md', content: 'Review the open pull requests.\n' },
    }),
    event(2, 'policy_decided', 'write_file', ['write-local', 'mode.ask', path, 'approval-required'], {
      reason: 'mode_ask',
      ruleSource: 'mode',
      step: 5,
      humanRequired: true,
      targets: [target],
    }),
    event(3, 'approval_requested', 'write_file', ['write-local', 'mode.ask', path, 'pending'], {
      ...approval,
      reason: 'mode_ask',
      expiresAt: at + 86400000,
      idempotencyKey,
    }),
    event(4, 'approval_resolved', 'write_file', ['write-local', 'mode.ask', path, 'approved'], {
      ...approval,
      decidedBy: 'user',
    }),
    event(5, 'started', 'write_file', ['write-local', 'mode.ask', path, 'started'], {
      idempotencyKey,
      attempt: 1,
    }),
    event(6, 'completed', 'write_file', ['write-local', 'mode.ask', path, 'completed'], {
      idempotencyKey,
      attempt: 1,
    }),
    event(7, 'failed', 'write_file', ['write-local', 'mode.ask', path, 'failed'], {
      idempotencyKey,
      attempt: 1,
      error: 'failed',
    }),
  ],
  [
    event(8, 'proposed', 'send_message', [null, null, null, null], { args: { channel: '#general' } }),
    event(9, 'policy_decided', 'send_message', ['external', 'mode.ask', null, 'approval-required'], {
      reason: 'mode_ask',
      ruleSource: 'mode',
      step: 5,
      humanRequired: true,
      targets: [],
    }),
    event(10, 'approval_requested', 'send_message', ['external', 'mode.ask', null, 'pending'], {
      ...approval,
      reason: 'mode_ask',
      expiresAt: at + 86400000,
      idempotencyKey,
    }),
  ],
];

/** The dictionary bytes: each row as `audit_log` stores it, the most common last. */
export const AUDIT_DICTIONARY: Buffer = Buffer.from(
  rows
    .flatMap((row) => [`[${row.map(eventBody).join(',')}]`, ...row.map((fields) => `[${eventBody(fields)}]`)])
    .join(''),
  'utf8',
);
