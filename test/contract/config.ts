import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseAgent, Scenario, ScenarioFolder } from './drivers/types.ts';

/** The model config of a case agent (a script file in `scripts/`, or an OpenAI-compatible server). */
function modelOf(agent: CaseAgent, folder: ScenarioFolder): Record<string, unknown> {
  if (agent.model.kind === 'openai-compatible') {
    return {
      provider: 'openai-compatible',
      baseUrl: agent.model.baseUrl,
      model: 'fake-model',
      apiKey: { secret: agent.model.apiKeySecret },
      maxRetries: 0,
    };
  }
  const file = join(folder.dir, 'scripts', `${agent.id}.json`);
  writeFileSync(file, JSON.stringify(agent.model.steps));
  return { provider: 'scripted', script: file };
}

/**
 * Writes `snotra.config.json` for a scenario into its folder: the two roots (`project`
 * read-write primary, `docs` read-only), every agent with its script, the scenario's shared
 * config, and what the surface adds (`surfaces`, extra agents such as sub-agent parents).
 * Returns the config file.
 */
export function writeScenarioConfig(
  folder: ScenarioFolder,
  scenario: Scenario,
  add: { readonly agents?: readonly CaseAgent[]; readonly surfaces?: Record<string, unknown> } = {},
): string {
  mkdirSync(join(folder.dir, 'scripts'), { recursive: true });
  const agents = Object.fromEntries(
    [...scenario.agents, ...(add.agents ?? [])].map((a) => [
      a.id,
      { mode: a.mode, ...(a.tools ? { tools: [...a.tools] } : {}), model: modelOf(a, folder) },
    ]),
  );
  const file = join(folder.dir, 'snotra.config.json');
  writeFileSync(
    file,
    JSON.stringify(
      {
        stateDir: folder.stateDir,
        workspace: {
          roots: [
            { id: 'project', path: folder.project, access: 'read-write', primary: true },
            { id: 'docs', path: folder.docs, access: 'read' },
          ],
        },
        agents,
        ...scenario.config,
        ...(add.surfaces ? { surfaces: add.surfaces } : {}),
      },
      null,
      2,
    ),
  );
  return file;
}
