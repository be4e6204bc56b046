import { modelFromConfig, Runtime, secretStoreFromConfig, type LoadedConfig } from '../../runtime/index.ts';
import { ClientError } from './errors.ts';
import type { ClientFeed, ClientSubmit, RuntimeClient } from './types.ts';

/** How an embedded runtime is started. */
export interface EmbeddedOptions {
  readonly loaded: LoadedConfig;
  readonly onRunEvent: ClientFeed;
  /** Where the runtime's log goes. */
  readonly logDestination?: NodeJS.WritableStream;
}

/**
 * A runtime started in this process for the client's life (what `snotra run` did before it could
 * join): it holds the state dir's lock (`StateDirLockedError` when another runtime does) and
 * stops when the client closes.
 */
export async function openEmbedded(o: EmbeddedOptions): Promise<RuntimeClient> {
  const rt = await Runtime.start({
    loaded: o.loaded,
    model: modelFromConfig(o.loaded),
    // Providers resolve their API key here at request time (secrets.backend).
    secretStore: secretStoreFromConfig(o.loaded),
    onRunEvent: o.onRunEvent,
    ...(o.logDestination === undefined ? {} : { logDestination: o.logDestination }),
  });
  const roots = o.loaded.config.workspace.roots;
  return {
    kind: 'embedded',
    pid: process.pid,
    agents: Object.keys(o.loaded.config.agents),
    async submit(m: ClientSubmit) {
      let session = m.session;
      if (m.continue === true) {
        const latest = rt.sessions.latest();
        if (latest === null) {
          const root = roots.find((r) => r.primary) ?? roots[0];
          throw new ClientError(
            'session_not_found',
            `--continue: no conversation yet in this workspace (${root?.path ?? '?'}); start one with \`snotra run MESSAGE\``,
          );
        }
        session = latest.sessionId;
      }
      return rt.runs.submit(m.agent, m.text, {
        ...(session !== undefined ? { sessionId: session, taskId: session } : {}),
        interaction: m.unattended ? 'unattended' : 'attended',
        surface: 'cli',
      });
    },
    waitForRun: (runId) => rt.waitForRun(runId),
    decideAsync: (id, decision, user, reason) => rt.approvals.decideAsync(id, decision, user, reason),
    approveWithGrant: async (id, scope, user) => rt.approvals.approveWithGrant(id, scope, user),
    close: () => rt.stop(),
  };
}
