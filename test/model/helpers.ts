import type { ModelStepRequest } from '../../actors/model/provider.ts';
import { modelTools } from '../../actors/model/tool-schemas.ts';
import type { TranscriptEntry } from '../../machines/run/types.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import { createSecretResolver, MemorySecretStore } from '../../runtime/secrets/index.ts';
import { Redactor } from '../../store/index.ts';

/** A key that must never leave the Authorization / x-api-key header. */
export const API_KEY = 'sk-test-Zq8v2LmN4pR6tX0yB3dF5hJ7kA9cE1gI';

/** A step request offering `read_file` and `list_dir`, with the key in a memory secret store. */
export function stepRequest(
  transcript: readonly TranscriptEntry[] = [{ role: 'user', text: 'read notes.txt' }],
  step = 0,
): ModelStepRequest & { redactor: Redactor } {
  const redactor = new Redactor();
  return {
    runId: 'run-1',
    agentId: 'assistant',
    step,
    transcript,
    tools: modelTools(ToolRegistry.withBuiltins(), new Set(['read_file', 'list_dir'])),
    secrets: createSecretResolver(new MemorySecretStore({ 'model-key': API_KEY }), redactor),
    redactor,
  };
}
