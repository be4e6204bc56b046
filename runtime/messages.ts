import { z } from 'zod';
import { defineKinds } from './bus/index.ts';

/**
 * The runtime's bus message kinds (payloads validated on receipt). Approval decisions are
 * deliberately not a bus kind: they come only from authenticated human surfaces.
 */
export const RUNTIME_KINDS = defineKinds({
  'agent.message': z.strictObject({
    messageId: z.string().min(1).max(256),
    sessionId: z.string().min(1).max(256),
    taskId: z.string().min(1).max(256).nullable(),
    parentRunId: z.string().min(1).max(256).nullable(),
    surface: z.string().min(1).max(64),
    interaction: z.enum(['attended', 'unattended']),
    text: z.string().max(100_000),
    conversation: z.boolean().optional(),
  }),
  'run.status': z.strictObject({
    runId: z.string(),
    agentId: z.string(),
    status: z.enum(['running', 'waiting_for_approval', 'resuming', 'completed', 'failed', 'denied']),
    reason: z.string().optional(),
  }),
  'approval.requested': z.strictObject({
    approvalId: z.string(),
    runId: z.string().nullable(),
    agentId: z.string(),
    parentRunId: z.string().nullable(),
    tool: z.string(),
    risk: z.string(),
    reason: z.string(),
    expiresAt: z.number(),
  }),
  'approval.resolved': z.strictObject({
    approvalId: z.string(),
    runId: z.string().nullable(),
    status: z.enum(['approved', 'denied', 'expired']),
  }),
});
export type RuntimeKinds = typeof RUNTIME_KINDS;
