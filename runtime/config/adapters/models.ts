import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AnthropicModel } from '../../../actors/model/anthropic.ts';
import { OpenAiCompatibleModel } from '../../../actors/model/openai-compatible.ts';
import type { ModelProvider } from '../../../actors/model/provider.ts';
import { ScriptedModel, type ScriptedStep } from '../../../actors/model/scripted.ts';
import type { HttpModelSettings } from '../../../actors/model/settings.ts';
import { ConfigError, formatIssues } from '../errors.ts';
import type { LoadedConfig } from '../load.ts';
import type { AgentConfig } from '../schema.ts';

/** What a scripted answer says its call used (a demo's or a test's tokens and cost). */
const Usage = z
  .strictObject({
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    costUsd: z.number().nonnegative().optional(),
  })
  .optional();

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
      usage: Usage,
    }),
    z.strictObject({ kind: z.literal('final'), text: z.string(), usage: Usage }),
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

/**
 * The agents a config starts runs of on its own (scheduled tasks, goal loops, platform chats)
 * that have no model: such a run is never a sub-agent's, so it has no parent's model to use.
 * One problem per reference, naming where it is. (Sub-agents, the Explorer included, use their
 * parent's model; the agent of `snotra run` or `chat` without one fails its first step, naming
 * `agents.<id>.model`.)
 */
export function topLevelWithoutModel(loaded: LoadedConfig): string[] {
  const { agents, surfaces } = loaded.config;
  const problems: string[] = [];
  const check = (agent: string, where: string) => {
    if (!Object.hasOwn(agents, agent) || agents[agent]?.model !== undefined) return;
    problems.push(
      `${where}: agent ${JSON.stringify(agent)} has no model; its runs are not a sub-agent's, so there is no parent model to use (set agents.${agent}.model)`,
    );
  };
  surfaces.scheduled.forEach((t, i) => check(t.agent, `surfaces.scheduled[${i}].agent`));
  surfaces.goalLoops.forEach((g, i) => check(g.agent, `surfaces.goalLoops[${i}].agent`));
  surfaces.platforms.forEach((p, i) => check(p.agent, `surfaces.platforms[${i}].agent`));
  return problems;
}

/** A provider for agents with no model configured: every step fails with a clear message. */
class UnconfiguredModel implements ModelProvider {
  async step(request: { agentId: string }): Promise<never> {
    throw new Error(
      `agent ${JSON.stringify(request.agentId)} has no model configured (set agents.${request.agentId}.model)`,
    );
  }
}

/** The API root each network provider uses when `model.baseUrl` is not set. */
export const DEFAULT_BASE_URLS = {
  'openai-compatible': 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
} as const;

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The settings of a network provider, checked: `model` is required; `baseUrl` is an http(s)
 * URL without credentials, query or fragment (they would end up in logs); an API key is never
 * sent over plain http except to a loopback server.
 */
export function httpSettings(
  agent: string,
  model: NonNullable<AgentConfig['model']>,
  file: string,
): HttpModelSettings {
  const where = `agents.${agent}.model`;
  const problems: string[] = [];
  const provider = model.provider as keyof typeof DEFAULT_BASE_URLS;
  const baseUrl = model.baseUrl ?? DEFAULT_BASE_URLS[provider];
  if (model.model === undefined)
    problems.push(`${where}.model: expected the model name for the ${provider} provider`);
  let url: URL | null = null;
  try {
    url = new URL(baseUrl);
  } catch {
    problems.push(`${where}.baseUrl: expected an http(s) URL such as ${DEFAULT_BASE_URLS[provider]}`);
  }
  if (url !== null) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      problems.push(`${where}.baseUrl: expected http or https, found ${url.protocol}`);
    if (url.username !== '' || url.password !== '')
      problems.push(
        `${where}.baseUrl: must not contain credentials; put the key in the secret store and name it in ${where}.apiKey`,
      );
    if (url.search !== '' || url.hash !== '')
      problems.push(`${where}.baseUrl: must not have a query or fragment`);
    if (url.protocol === 'http:' && model.apiKey !== undefined && !LOOPBACK.test(url.hostname))
      problems.push(
        `${where}.baseUrl: plain http to ${url.hostname} would send the API key unencrypted; use https (plain http is allowed for loopback servers only)`,
      );
  }
  for (const name of Object.keys(model.headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower === 'content-type' || lower === 'content-length' || lower === 'host' || lower === 'accept')
      problems.push(`${where}.headers.${name}: set by the runtime, cannot be configured`);
  }
  if (problems.length > 0) throw new ConfigError(file, problems);
  return {
    baseUrl,
    model: model.model as string,
    ...(model.apiKey ? { apiKey: model.apiKey } : {}),
    ...(model.headers ? { headers: model.headers } : {}),
    ...(model.timeoutMs !== undefined ? { timeoutMs: model.timeoutMs } : {}),
    ...(model.maxRetries !== undefined ? { maxRetries: model.maxRetries } : {}),
    ...(model.temperature !== undefined ? { temperature: model.temperature } : {}),
    ...(model.maxTokens !== undefined ? { maxTokens: model.maxTokens } : {}),
    ...(model.price !== undefined ? { price: model.price } : {}),
  };
}

/** Test seams of `modelFromConfig`. */
export interface ModelFromConfigOptions {
  /** First retry backoff (ms) of network providers; default 500. */
  readonly retryBaseMs?: number;
}

/**
 * The model provider of a config: agents with `model.provider: "scripted"` replay their script
 * file; `openai-compatible` and `anthropic` agents talk to their server (the API key is resolved
 * from the secret store at each request); the others fail each step with a message naming the
 * missing setting.
 */
export function modelFromConfig(loaded: LoadedConfig, options: ModelFromConfigOptions = {}): ModelProvider {
  const file = loaded.file ?? '(config)';
  const orphans = topLevelWithoutModel(loaded);
  if (orphans.length > 0) throw new ConfigError(file, orphans);
  const scripts: Record<string, ScriptedStep[]> = {};
  const network = new Map<string, ModelProvider>();
  for (const [agent, def] of Object.entries(loaded.config.agents)) {
    if (def.model?.provider === 'scripted') {
      if (def.model.script === undefined)
        throw new ConfigError(file, [
          `agents.${agent}.model.script: expected a file for the scripted provider`,
        ]);
      scripts[agent] = readScript(def.model.script);
    } else if (def.model !== undefined) {
      const base = httpSettings(agent, def.model, file);
      const settings =
        options.retryBaseMs === undefined ? base : { ...base, retryBaseMs: options.retryBaseMs };
      network.set(
        agent,
        def.model.provider === 'anthropic'
          ? new AnthropicModel(settings)
          : new OpenAiCompatibleModel(settings),
      );
    }
  }
  const scripted = new ScriptedModel(scripts);
  const none = new UnconfiguredModel();
  return {
    step: (req) => {
      if (Object.hasOwn(scripts, req.agentId)) return scripted.step(req);
      // An agent with no model of its own (a sub-agent, the Explorer) uses its nearest
      // ancestor's network model; a scripted script is never replayed for another agent.
      const own = network.get(req.agentId);
      if (own !== undefined) return own.step(req);
      const inherited = (req.inheritFrom ?? []).map((a) => network.get(a)).find((m) => m !== undefined);
      return (inherited ?? none).step(req);
    },
  };
}
