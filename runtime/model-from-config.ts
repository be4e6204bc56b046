import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ModelProvider } from '../actors/model/provider.ts';
import { ScriptedModel, type ScriptedStep } from '../actors/model/scripted.ts';
import { ConfigError, formatIssues } from './config/errors.ts';
import type { LoadedConfig } from './config/load.ts';

const StepSchema: z.ZodType<ScriptedStep> = z.strictObject({
  expect: z
    .strictObject({
      kind: z.enum(['tool.result', 'tool.denied', 'tool.failed', 'tool.interrupted']).optional(),
      tool: z.string().optional(),
      reason: z.string().optional(),
      contains: z.string().optional(),
    })
    .optional(),
  respond: z.union([
    z.strictObject({
      kind: z.literal('calls'),
      calls: z.array(z.strictObject({ id: z.string().min(1), tool: z.string().min(1), args: z.unknown() })),
      text: z.string().optional(),
    }),
    z.strictObject({ kind: z.literal('final'), text: z.string() }),
  ]),
}) as z.ZodType<ScriptedStep>;

/** Reads a scripted model's steps from a JSON file (`[step, ...]`), naming the file and path on error. */
export function readScript(file: string): ScriptedStep[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(file, [`cannot read the model script: ${(err as Error).message}`], { cause: err });
  }
  const parsed = z.array(StepSchema).safeParse(raw, { reportInput: true });
  if (!parsed.success) throw new ConfigError(file, formatIssues(parsed.error.issues));
  return parsed.data;
}

/** A provider for agents with no model configured: every step fails with a clear message. */
class UnconfiguredModel implements ModelProvider {
  async step(request: { agentId: string }): Promise<never> {
    throw new Error(
      `agent ${JSON.stringify(request.agentId)} has no model configured (set agents.${request.agentId}.model)`,
    );
  }
}

/**
 * The model provider of a config: agents with `model.provider: "scripted"` replay their script
 * file; the others fail each step with a message naming the missing setting.
 */
export function modelFromConfig(loaded: LoadedConfig): ModelProvider {
  const scripts: Record<string, ScriptedStep[]> = {};
  for (const [agent, def] of Object.entries(loaded.config.agents)) {
    if (def.model?.provider === 'scripted') {
      if (def.model.script === undefined)
        throw new ConfigError(loaded.file ?? '(config)', [
          `agents.${agent}.model.script: expected a file for the scripted provider`,
        ]);
      scripts[agent] = readScript(def.model.script);
    }
  }
  const scripted = new ScriptedModel(scripts);
  const none = new UnconfiguredModel();
  return { step: (req) => (Object.hasOwn(scripts, req.agentId) ? scripted.step(req) : none.step(req)) };
}
