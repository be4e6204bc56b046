import { homedir } from 'node:os';
import { join } from 'node:path';
import { createPathGuard, type SnotraPathGuard } from '../../../policy/paths/index.ts';
import { CONFIG_FILE_NAME, type LoadedConfig } from '../load.ts';

/**
 * The path guard of a config: the runtime's own state dir and config file are sensitive paths,
 * plus the config's extra `sensitivePaths` entries.
 */
export function createPolicyPaths(loaded: LoadedConfig): SnotraPathGuard {
  const extra = loaded.config.sensitivePaths;
  const asRule = (e: (typeof extra)[number]) => ({
    id: e.id,
    description: e.description,
    patterns: e.patterns,
  });
  return createPathGuard({
    home: homedir(),
    stateDir: loaded.config.stateDir,
    // With embedded defaults, protect the config file an agent could otherwise create.
    configFile: loaded.file ?? join(loaded.dir, CONFIG_FILE_NAME),
    extraSensitive: extra.filter((e) => e.kind === 'sensitive').map(asRule),
    extraNeverWritable: extra.filter((e) => e.kind === 'never-writable').map(asRule),
  });
}
