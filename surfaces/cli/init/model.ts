import { CommandFailure } from '../io.ts';
import type { ApprovalTerminal } from '../run/prompt.ts';
import { DEFAULT_MODEL, initModel, type CheckedModelFlags, type InitModel } from './choices.ts';
import { detectionRoot, probe, type DetectEnv, type Detected, type LocalServer } from './detect.ts';
import { askProvider } from './question.ts';

/** How long a probe waits: a server the user named may be busy loading; the question's look is quick. */
export const PROBE_TIMEOUT_MS = { named: 10_000, question: 3_000 } as const;

const SERVER_NAME: Record<LocalServer, string> = { ollama: 'Ollama', 'llama.cpp': 'llama.cpp server' };
const START_HINT: Record<LocalServer, string> = {
  ollama: 'start it with `ollama serve`',
  'llama.cpp': 'start it with `llama-server -m MODEL.gguf --jinja --port 8080`',
};

/** What `snotra init` writes for the assistant's model (null: none), and the lines that say so. */
export interface ModelOutcome {
  readonly model: InitModel | null;
  readonly lines: readonly string[];
}

/**
 * The assistant's model for `snotra init`: from the flags when `--provider` is given (a local
 * server without `--model` is asked for its models, and must answer), from the question when
 * there is a terminal and no flag, else none (scripts keep the old starter). Fails with a
 * `CommandFailure` naming the server, the address and the fix; nothing is written then.
 */
export async function chooseModel(
  flags: CheckedModelFlags,
  env: DetectEnv & Readonly<Record<string, string | undefined>>,
  terminal: ApprovalTerminal | null,
): Promise<ModelOutcome> {
  if (flags.provider === null) {
    if (terminal === null)
      return {
        model: null,
        lines: [
          'model: none (add one with: snotra init --force --provider ollama|llama.cpp|openai|anthropic|openai-compatible)',
        ],
      };
    const picked = await askProvider(terminal, env, PROBE_TIMEOUT_MS.question);
    if (picked === null) throw new CommandFailure('init_no_answer', 'no provider chosen; nothing written');
    return outcome(picked.model, env);
  }
  if (flags.provider === 'none') return { model: null, lines: ['model: none (--provider none)'] };
  if (flags.provider === 'ollama' || flags.provider === 'llama.cpp') {
    const server = flags.provider;
    const baseUrl = flags.baseUrl ?? detectionRoot(server, env);
    const model = flags.model ?? (await firstModel(server, baseUrl));
    return outcome(initModel(server, { baseUrl, model, apiKeyEnv: flags.apiKeyEnv }), env);
  }
  const model =
    flags.model ?? (flags.provider === 'openai-compatible' ? null : DEFAULT_MODEL[flags.provider]);
  if (model === null) throw new CommandFailure('usage', '--provider openai-compatible needs --model');
  return outcome(
    initModel(flags.provider, { baseUrl: flags.baseUrl, model, apiKeyEnv: flags.apiKeyEnv }),
    env,
  );
}

/** The first model a named local server lists; fails when it does not answer or lists none. */
async function firstModel(server: LocalServer, baseUrl: string): Promise<string> {
  const found: Detected = await probe(server, baseUrl, PROBE_TIMEOUT_MS.named);
  const name = SERVER_NAME[server];
  if (found.kind === 'absent')
    throw new CommandFailure(
      'init_no_server',
      `--provider ${server}: no ${name} found (${found.why}); ${START_HINT[server]}, or name the model with --model (and its address with --base-url)`,
    );
  const first = found.models[0];
  if (first === undefined)
    throw new CommandFailure(
      'init_no_model',
      `--provider ${server}: the ${name} at ${baseUrl} lists no model${server === 'ollama' ? ' (ollama pull qwen2.5:7b)' : ''}; or name one with --model`,
    );
  return first;
}

/** The chosen model and the lines that tell the user what was written and what is left to do. */
function outcome(model: InitModel | null, env: Readonly<Record<string, string | undefined>>): ModelOutcome {
  if (model === null) return { model: null, lines: ['model: none (add agents.assistant.model later)'] };
  const lines = [`model: ${model.model} (${model.provider}) at ${model.baseUrl}`];
  if (model.apiKey !== undefined) {
    const set = (env[model.apiKey.env] ?? '') !== '';
    lines.push(
      set
        ? `key: read from ${model.apiKey.env} (set in this shell)`
        : `key: read from ${model.apiKey.env}, which is not set here: export ${model.apiKey.env}=... before snotra run`,
    );
  }
  lines.push('next: snotra run "hello" (or snotra chat)');
  return { model, lines };
}
