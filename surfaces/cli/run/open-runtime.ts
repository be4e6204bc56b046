import {
  type LoadedConfig,
  modelFromConfig,
  type RunFeedEvent,
  Runtime,
  secretStoreFromConfig,
} from '../../../runtime/index.ts';
import type { CliIo } from '../io.ts';
import { readableLogs, warningsTo } from './warnings.ts';

/** What `chat` needs to reach a runtime for the config. */
export interface OpenRuntimeOptions {
  readonly loaded: LoadedConfig;
  readonly io: CliIo;
  /** `--json`: log lines stay JSON. */
  readonly json: boolean;
  /** The command's name in a warning line (`snotra chat`). */
  readonly who: string;
  readonly onRunEvent: (event: RunFeedEvent) => void;
}

/**
 * The runtime `snotra chat` starts when none runs on the config's state dir (it joins a running
 * `snotra start` first: `surfaces/client/chat-joined.ts`): an embedded one in this process, whose
 * log shows only warnings and errors, one readable line each on a terminal.
 */
export async function openRuntime(options: OpenRuntimeOptions): Promise<Runtime> {
  const { loaded, io, json, who } = options;
  return Runtime.start({
    loaded,
    model: modelFromConfig(loaded),
    // Providers resolve their API key here at request time (secrets.backend).
    secretStore: secretStoreFromConfig(loaded),
    onRunEvent: options.onRunEvent,
    logDestination: warningsTo(io, readableLogs(json), who),
  });
}
