import type { Config } from './schema.ts';

/**
 * A validated config with every path made absolute, and where it came from. Its own module so
 * that what consumes a loaded config (the tool registry, which `validate.ts` also uses) does not
 * import the loader.
 */
export interface LoadedConfig {
  readonly config: Config;
  /** The config file, or null for the embedded defaults. */
  readonly file: string | null;
  /** The folder relative paths were resolved against. */
  readonly dir: string;
}
