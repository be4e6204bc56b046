import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsFresh, MANIFEST, sourceStats } from '../../bin/build-state.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The package as a user gets it: `npm pack` of a copy of this checkout, installed with npm into a
 * temporary project, its bin run, the "Embedding" example (docs/embedding.md) compiled with tsc against the
 * shipped .d.ts and run on embedded defaults (its own nats-server) with the scripted model. npm
 * fetches the dependencies from the registry (its cache first); install scripts are skipped and
 * better-sqlite3's binary is the one this checkout built (its script would download or compile
 * it: no network beyond the registry, and minutes of CPU).
 *
 * The copy packs the dist/ the suite's setup has just built from these very sources
 * (test/support/build-dist.ts): a second compile from scratch in the copy, as `prepack` does for
 * a release, cost a minute of CPU and proved nothing more. Only outputs whose source exists are
 * copied, so an output left behind by a deleted source (what `prepack`'s `--clean` is for) can
 * never ship from this test either; `prepack` itself is checked to be that clean build.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** What a checkout holds that is not the project: never copied into the staging folder. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', '.snotra', 'coverage', '.vitest-tmp']);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

/**
 * Whether an entry of dist/ (a path inside it) is the output of a source that exists: a compiled
 * module or its types, a copied plain module, or what every build makes anew (the CLI bundle, the
 * web app, the build's bookkeeping).
 */
function hasSource(rel: string): boolean {
  if (rel === '' || /^(cli|surfaces\/sidecar\/app)(\/|$)/.test(rel)) return true;
  if (rel === '.tsbuildinfo' || rel === 'build-manifest.json') return true;
  if (!/\.(js|d\.ts|mjs|d\.mts)$/.test(rel))
    return statSync(join(ROOT, rel), { throwIfNoEntry: false })?.isDirectory() === true;
  const stem = rel.replace(/\.(js|d\.ts)$/, '');
  if (stem !== rel) return existsSync(join(ROOT, `${stem}.ts`));
  return existsSync(join(ROOT, rel));
}

let dir = '';
let stage = '';
let project = '';
let packed: string[] = [];
const took: Record<string, number> = {};

function run(cmd: string, args: string[], cwd: string, timeout = 240_000) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout,
    killSignal: 'SIGKILL',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, error: r.error };
}

function ok(cmd: string, args: string[], cwd: string): string {
  const started = performance.now();
  const r = run(cmd, args, cwd);
  took[`${cmd} ${args[0]}`] = Math.round(performance.now() - started);
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? String(r.error)}):\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-pack-')));
  stage = join(dir, 'stage');
  cpSync(ROOT, stage, {
    recursive: true,
    filter: (src) => !NOT_COPIED.has(relative(ROOT, src).split(sep)[0] as string),
  });
  // A state dir left in the project must never ship.
  mkdirSync(join(stage, '.snotra'));
  writeFileSync(join(stage, '.snotra', 'snotra.db'), 'state');
  symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'));
  if (!buildIsFresh(ROOT))
    throw new Error('dist/ is not a build of the current sources (see the build-dist setup output above)');
  cpSync(join(ROOT, 'dist'), join(stage, 'dist'), {
    recursive: true,
    filter: (src) => hasSource(relative(join(ROOT, 'dist'), src)),
  });
  // The copy is the build of the copied sources: its manifest records them as they are in the copy.
  writeFileSync(join(stage, MANIFEST), `${JSON.stringify({ sources: sourceStats(stage) })}\n`);
  const out = ok('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], stage);
  const [info] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  if (info === undefined) throw new Error(`npm pack printed no file list:\n${out}`);
  packed = info.files.map((f) => f.path);

  project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'embedding-test', private: true, type: 'module' }),
  );
  ok(
    'npm',
    ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', join(dir, info.filename)],
    project,
  );
  const binary = 'better-sqlite3/build/Release/better_sqlite3.node';
  mkdirSync(join(project, 'node_modules', binary, '..'), { recursive: true });
  copyFileSync(join(ROOT, 'node_modules', binary), join(project, 'node_modules', binary));
}, 600_000);

afterAll(() => {
  console.log(`package test timings (ms): ${JSON.stringify(took)}`);
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds the build, the bin, the schema, the web app, README, its docs/ pages and package.json, and nothing else', () => {
    const allowed =
      /^(dist\/.+\.(js|d\.ts|mjs|d\.mts)|dist\/surfaces\/sidecar\/app\/(index\.html|assets\/[^/]+\.(js|css|svg|png|ico))|bin\/snotra\.js|schema\/snotra\.config\.schema\.json|README\.md|docs\/[A-Za-z0-9-]+\.md|package\.json)$/;
    expect(packed.filter((f) => !allowed.test(f))).toEqual([]);
    for (const f of [
      'package.json',
      'README.md',
      // The README's links go to docs/: they resolve in the installed package too.
      'docs/embedding.md',
      'docs/security.md',
      'bin/snotra.js',
      'schema/snotra.config.schema.json',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/main.js',
      'dist/cli/auth.js',
      'dist/surfaces/cli/main.js',
      'dist/surfaces/cli/start.js',
      'dist/actors/tools/search/worker.mjs',
      'dist/runtime/runtime.d.ts',
      // The web app the sidecar serves (static.ts finds it next to itself).
      'dist/surfaces/sidecar/app/index.html',
    ])
      expect(packed).toContain(f);
    // No sources, tests, state, build bookkeeping.
    expect(packed.filter((f) => /(^|\/)(test|bench|\.snotra)\//.test(f) || /\.test\./.test(f))).toEqual([]);
    expect(packed.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(packed.filter((f) => /tsbuildinfo|build-manifest/.test(f))).toEqual([]);
  });

  it('is built for a release from scratch: prepack compiles dist/ clean', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.prepack).toBe('node scripts/build.mjs --clean');
    // --clean removes dist/ before tsc runs, so no output of a deleted source survives.
    const build = readFileSync(join(ROOT, 'scripts', 'build.mjs'), 'utf8');
    const clean = build.indexOf("if (args.includes('--clean')) rmSync(join(root, 'dist')");
    expect(clean).toBeGreaterThan(-1);
    expect(clean).toBeLessThan(build.indexOf('execFileSync(process.execPath, [tsc'));
  });

  it('exports the runtime API and the schema, and no internal module', () => {
    // No transpiler comes with it: tsx is a dev dependency.
    expect(existsSync(join(project, 'node_modules', 'tsx'))).toBe(false);
    const probe = `
      const api = await import('snotra-runtime');
      const names = ['Runtime', 'loadConfig', 'parseConfig', 'resolveConfig', 'modelFromConfig', 'evaluate', 'ConfigError'];
      const schema = (await import('node:fs')).readFileSync(new URL(import.meta.resolve('snotra-runtime/schema.json')), 'utf8');
      let internal = 'imported';
      try { await import('snotra-runtime/runtime/runtime.js'); } catch (e) { internal = e.code; }
      console.log(JSON.stringify({
        functions: names.filter((n) => typeof api[n] === 'function'),
        decision: api.Decision.safeParse({}).success,
        feed: api.RUN_FEED_EVENT_TYPES.includes('run.completed'),
        schemaTitle: typeof JSON.parse(schema).properties,
        internal,
      }));`;
    const r = run(process.execPath, ['--input-type=module', '-e', probe], project, 60_000);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      functions: [
        'Runtime',
        'loadConfig',
        'parseConfig',
        'resolveConfig',
        'modelFromConfig',
        'evaluate',
        'ConfigError',
      ],
      decision: false,
      feed: true,
      schemaTitle: 'object',
      internal: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
  }, 120_000);

  it('its bin runs the compiled JavaScript: --version and one policy decision as pure JSON', () => {
    const bin = join(project, 'node_modules', '.bin', 'snotra');
    const version = run(bin, ['--version'], project, 60_000);
    expect(version).toMatchObject({ status: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const check = run(
      bin,
      ['policy', 'check', '--tool', 'read_file', '--args', '{"path":"/etc/shadow"}', '--json'],
      project,
      60_000,
    );
    expect(check.status).toBe(11);
    expect(JSON.parse(check.stdout)).toMatchObject({ decision: 'deny' });
  }, 120_000);

  it('its bin imports only the command it runs (lazy command imports), and never the runtime for a policy check', () => {
    // A module hook (node:module register) writes down every module of the package that loads.
    writeFileSync(
      join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
      export async function load(url, context, next) {
        if (url.includes('/node_modules/snotra-runtime/')) appendFileSync(process.env.LOADED_LOG, url + '\\n');
        return next(url, context);
      }`,
    );
    writeFileSync(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module'; register('./hooks.mjs', import.meta.url);`,
    );
    const bin = join(project, 'node_modules', 'snotra-runtime', 'bin', 'snotra.js');
    const loaded = (name: string, args: string[]) => {
      const log = join(dir, `loaded-${name}.txt`);
      const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), bin, ...args], {
        cwd: project,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, LOADED_LOG: log },
      });
      expect(r.stderr).toBe('');
      return {
        status: r.status,
        files: readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((u) =>
            u.slice(u.indexOf('/node_modules/snotra-runtime/') + '/node_modules/snotra-runtime/'.length),
          ),
      };
    };
    // The bin runs the CLI's bundle (dist/cli/, scripts/bundle-cli.mjs), which names each module
    // it holds in a comment (`// surfaces/cli/policy-check.ts`): the modules of the loaded files.
    const held = (files: string[]) => [
      ...new Set(
        files
          .filter((f) => f.startsWith('dist/cli/'))
          .flatMap((f) => [
            ...readFileSync(join(project, 'node_modules', 'snotra-runtime', f), 'utf8').matchAll(
              /^\/\/ (\S+\.ts)$/gm,
            ),
          ])
          .map((m) => m[1] as string),
      ),
    ];
    const commandModules = (files: string[]) =>
      held(files).filter(
        (f) =>
          /^surfaces\/cli\/[^/]+\.ts$/.test(f) &&
          !/\/(main|program|commands|command-spec|policy-commands|io|package-root)\.ts$/.test(f),
      );
    const version = loaded('version', ['--version']);
    expect(version.status).toBe(0);
    expect(version.files).toContain('dist/cli/main.js');
    expect(held(version.files)).toContain('surfaces/cli/main.ts');
    // Compiled JavaScript only, none of the unbundled tree, and no command module for --version.
    expect(version.files.filter((f) => !f.endsWith('.js'))).toEqual([]);
    expect(version.files.filter((f) => f.startsWith('dist/') && !f.startsWith('dist/cli/'))).toEqual([]);
    expect(commandModules(version.files)).toEqual([]);
    const check = loaded('check', [
      'policy',
      'check',
      '--tool',
      'read_file',
      '--args',
      '{"path":"x"}',
      '--json',
    ]);
    expect(check.status).toBe(0); // read-only and inside the folder: allowed on the embedded defaults
    expect(commandModules(check.files)).toEqual(['surfaces/cli/policy-check.ts']);
    expect(held(check.files)).not.toContain('runtime/runtime.ts');
    expect(held(check.files).filter((f) => f.startsWith('store/'))).toEqual([]);
  }, 120_000);

  it('the "Embedding" example (docs/embedding.md) compiles against the shipped types and runs: chat, approve, deny, done', () => {
    const example = readFileSync(join(ROOT, 'examples', 'embedding.ts'), 'utf8');
    // The Embedding page shows the very file the test runs.
    const page = readFileSync(join(ROOT, 'docs', 'embedding.md'), 'utf8');
    expect(page.startsWith('# Embedding\n')).toBe(true);
    const section = page;
    expect(
      section.slice(section.indexOf('```ts\n') + 6, section.indexOf('\n```', section.indexOf('```ts\n')) + 1),
    ).toBe(example);

    writeFileSync(join(project, 'embedding.ts'), example);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          // The shipped .d.ts are checked too, with the types they name (only @types/node is the user's).
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          outDir: 'out',
        },
        files: ['embedding.ts'],
      }),
    );
    const tsc = run(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'],
      project,
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    mkdirSync(join(project, 'ws'));
    writeFileSync(
      join(project, 'script.json'),
      JSON.stringify([
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'NOTES.md', content: '# Notes\n' } }],
          },
        },
        {
          expect: { kind: 'tool.result', tool: 'write_file' },
          respond: {
            kind: 'calls',
            calls: [{ id: 'c2', tool: 'write_file', args: { path: 'notes.sh', content: 'rm -rf ~\n' } }],
          },
        },
        {
          expect: { kind: 'tool.denied', tool: 'write_file' },
          respond: { kind: 'final', text: 'notes written' },
        },
      ]),
    );
    writeFileSync(
      join(project, 'snotra.config.json'),
      JSON.stringify({
        stateDir: 'state',
        workspace: { roots: [{ id: 'ws', path: 'ws', access: 'read-write' }] },
        agents: { assistant: { mode: 'ask', model: { provider: 'scripted', script: 'script.json' } } },
      }),
    );
    const r = run(process.execPath, ['out/embedding.js', 'snotra.config.json'], project, 120_000);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      `approval write_file ${join(project, 'ws', 'NOTES.md')} (attended): approved`,
      `approval write_file ${join(project, 'ws', 'notes.sh')} (attended): denied`,
    ]);
    expect(JSON.parse(lines[2] as string)).toMatchObject({
      runId: expect.stringMatching(/^assistant:/),
      outcome: { status: 'completed', reason: 'final_answer', text: 'notes written' },
    });
    expect(r.status).toBe(0);
    expect(readFileSync(join(project, 'ws', 'NOTES.md'), 'utf8')).toBe('# Notes\n');
    expect(existsSync(join(project, 'ws', 'notes.sh'))).toBe(false);
  }, 300_000);
});

describe('the bin in a checkout', () => {
  it('runs dist/ only while it is a build of the current sources, else the sources (never stale code)', () => {
    const help = () => run(process.execPath, [join(stage, 'bin', 'snotra.js'), '--help'], stage, 60_000);
    // The build npm pack made is fresh: the bin runs it (a marker put into the compiled file shows):
    // the chunk of the CLI's bundle that holds program.ts (its name changes with its content).
    const bundled = join(stage, 'dist', 'cli');
    const programChunk = () => {
      const chunk = readdirSync(bundled).find((f) =>
        /^\/\/ surfaces\/cli\/program\.ts$/m.test(readFileSync(join(bundled, f), 'utf8')),
      );
      if (chunk === undefined) throw new Error('no chunk of dist/cli holds surfaces/cli/program.ts');
      return join(bundled, chunk);
    };
    const js = readFileSync(programChunk(), 'utf8');
    expect(js).toContain('Snotra Runtime: local AI agents');
    writeFileSync(
      programChunk(),
      js.replace('Snotra Runtime: local AI agents', 'COMPILED BUILD: local AI agents'),
    );
    expect(help().stdout).toContain('COMPILED BUILD: local AI agents');
    // A source edited after the build: the bin runs the sources through tsx instead.
    const source = join(stage, 'surfaces', 'cli', 'program.ts');
    const original = readFileSync(source, 'utf8');
    writeFileSync(source, `${original}\n// edited after the build\n`);
    const edited = help();
    expect(edited.status).toBe(0);
    expect(edited.stdout).toContain('Snotra Runtime: local AI agents');
    expect(edited.stdout).not.toContain('COMPILED BUILD');
    // Built again (the manifest a build writes last, without compiling the same bytes once more).
    writeFileSync(source, original);
    writeFileSync(join(stage, MANIFEST), `${JSON.stringify({ sources: sourceStats(stage) })}\n`);
    expect(help().stdout).toContain('COMPILED BUILD');
    // A file added to a source folder makes it stale as well (its folder's mtime changed): the same
    // check the bin made above, asked directly (a second run through tsx costs ~3 CPU-s).
    expect(buildIsFresh(stage)).toBe(true);
    writeFileSync(join(stage, 'runtime', 'added.ts'), 'export const added = 1;\n');
    expect(buildIsFresh(stage)).toBe(false);
  }, 300_000);
});
