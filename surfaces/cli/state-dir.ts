import { resolve } from 'node:path';
import { resolveConfig } from '../../runtime/config/load.ts';

/** The state dir a CLI command works on: `--state-dir D`, else the config's (`--config F`, ./snotra.config.json or the embedded defaults: outside the workspace). */
export function stateDirOf(values: { 'state-dir'?: string; config?: string }, cwd: string): string {
  if (values['state-dir'] !== undefined) return resolve(cwd, values['state-dir']);
  return resolveConfig(values.config, cwd).config.stateDir;
}
