import { z } from 'zod';
import { Interaction, Mode } from '../../../policy/risk.ts';
import { ToolRule } from '../../../policy/rules.ts';
import { Comment } from './common.ts';
import { Model } from './model.ts';

const Budget = z.strictObject({
  modelCalls: z.int().positive().optional().describe('Most model calls one run may make (default 50).'),
  toolCalls: z.int().positive().optional().describe('Most tool calls one run may make (default 100).'),
  wallTimeMs: z
    .int()
    .positive()
    .optional()
    .describe('Longest a run may take, in ms (default 600000: ten minutes).'),
  tokens: z
    .int()
    .positive()
    .optional()
    .describe('Most tokens (input and output together) one run may use (default: no limit).'),
  costUsd: z
    .number()
    .positive()
    .optional()
    .describe("Most one run may cost, in US dollars, by its model's price (default: no limit)."),
});

const SessionBudget = z.strictObject({
  tokens: z
    .int()
    .positive()
    .optional()
    .describe('Most tokens (input and output together) all runs of one session may use together.'),
  costUsd: z
    .number()
    .positive()
    .optional()
    .describe("Most all runs of one session may cost together, in US dollars, by its model's price."),
});

const Agent = z.strictObject({
  $comment: Comment,
  mode: Mode.default('ask').describe(
    'The permission mode: "ask" (default: side effects need approval), "allow" (the policy still applies rules, roots and hard lines) or "deny" (every call is denied).',
  ),
  tools: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'The tools this agent may see, by name, e.g. ["read_file", "list_dir"] (default: every tool of this config).',
    ),
  rules: z
    .array(ToolRule)
    .default([])
    .describe(
      'Rules that can only ask or deny, never allow, e.g. { "id": "no-push", "command": "git push", "effect": "deny" }.',
    ),
  model: Model.optional().describe(
    "The model this agent talks to (`snotra run` needs one); a sub-agent without one uses its parent's.",
  ),
  instructions: z
    .string()
    .max(100_000)
    .optional()
    .describe(
      "The agent's system prompt, sent after the runtime's short preamble (the agent's roots and their access, its mode, its tools).",
    ),
  budget: Budget.optional().describe(
    'Limits of one run of this agent. A run that would go past one asks a human to extend it (attended: inline; unattended: an Inbox item of kind "budget"); denied, it ends failed with the budget\'s reason code.',
  ),
  sessionBudget: SessionBudget.optional().describe(
    'Limits of one session (durable conversation) of this agent, over all its runs: each run starts with at most what the session has left; a run that would go past it asks a human to extend it like a run budget (approving grants the run budget of that dimension, or the session budget when the run has none).',
  ),
  interaction: Interaction.optional().describe(
    'Whether runs have a human at hand ("attended") or park approvals in the Inbox ("unattended").',
  ),
  mayDelegate: z
    .boolean()
    .optional()
    .describe(
      'As a sub-agent (a `spawn_agent` profile): whether it may start sub-agents of its own (default false). Never beyond its parent: the child of a parent that may not delegate may not either.',
    ),
});

/** The `agents` section: the agents by id (default: one agent "assistant" in mode "ask"). */
export const AgentsSection = z
  .record(
    z.string().regex(/^[A-Za-z0-9_-]+$/),
    Agent.describe('One agent: its mode, rules, model and limits.'),
  )
  .default({ assistant: { mode: 'ask', rules: [] } })
  .describe('The agents by id (letters, digits, "_" and "-"). Default: one agent "assistant" in mode "ask".');

/** One agent of the config, defaults applied. */
export type AgentConfig = z.infer<typeof Agent>;
