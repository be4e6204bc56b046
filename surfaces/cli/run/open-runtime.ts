import {
  type LoadedConfig,
  modelFromConfig,
  type RunFeedEvent,
  Runtime,
  secretStoreFromConfig,
} from '../../../runtime/index.ts';
import type { CliIo } from '../io.ts';
import { readableLogs, warningsTo } from './warnings.ts';

/** What `run` and `chat` need to reach a runtime for the config. */
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
 * The one path by which `snotra run` and `snotra chat` get a runtime: today an embedded one in
 * this process, started on the config's state dir (one runtime per state dir), whose log shows
 * only warnings and errors, one readable line each on a terminal. Joining a running
 * `snotra start` belongs here, so both commands gain it at once.
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
