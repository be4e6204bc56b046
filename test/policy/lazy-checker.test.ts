/**
 * `snotra policy check`'s checker loads the bash parser only when a decision needs it and probes
 * the OS sandbox only when a decision depends on it. The law: for every call, the decision of a
 * checker whose parser was loaded up front (`check`) equals the decision of a fresh lazy checker
 * (`decide`), which loads the parser on the way — over a sample of the shell corpus, in every
 * mode, with command rules that make the rule step list simple commands.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../policy/context.ts';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import { parseConfig, type LoadedConfig } from '../../runtime/config/load.ts';
import { createPolicyChecker, type PolicyChecker } from '../../runtime/policy/checker.ts';
import { loadShellAnalyzer, ShellNotLoaded } from '../../runtime/policy/lazy-shell.ts';
import { detectSandbox } from '../../runtime/sandbox/detect.ts';
import { SHELL_CORPUS } from './shell-corpus.ts';
import { runs } from '../support/laws.ts';

let dir: string;
let loaded: LoadedConfig;
let eager: PolicyChecker;
const AGENTS = ['allow', 'ask', 'deny', 'ruled'] as const;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-lazy-')));
  mkdirSync(join(dir, 'project'));
  const rules = [
    { id: 'no-push', command: 'git push', effect: 'deny' },
    { id: 'ask-rm', command: 'rm', effect: 'ask' },
    { id: 'ask-curl', command: 'curl', effect: 'ask' },
  ];
  loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write', primary: true }] },
      agents: {
        allow: { mode: 'allow' },
        ask: { mode: 'ask' },
        deny: { mode: 'deny' },
        ruled: { mode: 'allow', rules },
      },
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );
  eager = await createPolicyChecker(loaded);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A lazy checker with counters on the real parser loader and the real sandbox probe. */
async function lazyChecker(): Promise<{ checker: PolicyChecker; loads: () => number; probes: () => number }> {
  let loads = 0;
  let probes = 0;
  const checker = await createPolicyChecker(loaded, {
    lazyShell: true,
    loadShell: (): Promise<Required<CommandAnalyzer>> => {
      loads++;
      return loadShellAnalyzer();
    },
    detectSandbox: () => {
      probes++;
      return detectSandbox();
    },
  });
  return { checker, loads: () => loads, probes: () => probes };
}

const corpusCall = fc
  .constantFrom(...SHELL_CORPUS.map((c) => c.command))
  .map((command): ToolCall => ({ tool: 'shell', args: { command, cwd: 'project' } }));
const otherCall = fc.oneof(
  fc
    .constantFrom('project/a.txt', 'notes.txt', '~/.ssh/id_rsa', '/etc/shadow', '../x', 'state/snotra.db')
    .map((path): ToolCall => ({ tool: 'read_file', args: { path } })),
  fc
    .constantFrom('a.txt', '.git/config')
    .map((path): ToolCall => ({ tool: 'write_file', args: { path, content: 'x' } })),
  fc
    .constantFrom(['status'], ['log', '-1'], ['push'])
    .map((args): ToolCall => ({ tool: 'git_query', args: { args } })),
  fc.constant<ToolCall>({ tool: 'shell', args: { command: 42 } }),
  fc.constant<ToolCall>({ tool: 'no_such_tool', args: {} }),
);

describe('the lazy policy checker', () => {
  it('decides every call as the checker with the parser loaded up front (corpus sample, every mode)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...AGENTS),
        fc.array(fc.oneof(corpusCall, otherCall), { minLength: 1, maxLength: 4 }),
        async (agent, calls) => {
          const lazy = await lazyChecker();
          for (const call of calls) {
            const want = eager.check(agent, call);
            expect(await lazy.checker.decide(agent, call)).toEqual(want);
            // And once loaded, the lazy checker's own sync path agrees too.
            if (lazy.loads() > 0) expect(lazy.checker.check(agent, call)).toEqual(want);
          }
          expect(lazy.loads()).toBeLessThanOrEqual(1);
          expect(lazy.probes()).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: runs(120) },
    );
  });

  it('covers the whole corpus in allow mode with command rules', async () => {
    const lazy = await lazyChecker();
    for (const c of SHELL_CORPUS) {
      const call: ToolCall = { tool: 'shell', args: { command: c.command } };
      expect(await lazy.checker.decide('ruled', call)).toEqual(eager.check('ruled', call));
    }
    expect(lazy.loads()).toBe(1);
  });

  it('loads no parser and runs no sandbox probe for a file call', async () => {
    const lazy = await lazyChecker();
    const d = await lazy.checker.decide('allow', { tool: 'read_file', args: { path: 'project/a.txt' } });
    expect(d).toMatchObject({ decision: 'allow', reason: 'mode_allow' });
    expect(
      await lazy.checker.decide('ask', { tool: 'read_file', args: { path: '~/.ssh/id_rsa' } }),
    ).toMatchObject({
      decision: 'deny',
      reason: 'sensitive_path',
    });
    expect([lazy.loads(), lazy.probes()]).toEqual([0, 0]);
    // A shell call in `ask` mode needs the parser but not the sandbox; in `allow` mode both, once.
    await lazy.checker.decide('ask', { tool: 'shell', args: { command: 'ls' } });
    expect([lazy.loads(), lazy.probes()]).toEqual([1, 0]);
    await lazy.checker.decide('allow', { tool: 'shell', args: { command: 'ls' } });
    await lazy.checker.decide('allow', { tool: 'shell', args: { command: 'ls -la' } });
    expect([lazy.loads(), lazy.probes()]).toEqual([1, 1]);
  });

  it('refuses a synchronous check that needs the parser before it is loaded, and decides it after', async () => {
    const lazy = await lazyChecker();
    const call: ToolCall = { tool: 'shell', args: { command: 'rm -rf /' } };
    expect(() => lazy.checker.check('allow', call)).toThrow(ShellNotLoaded);
    expect(await lazy.checker.decide('allow', call)).toMatchObject({
      decision: 'deny',
      reason: 'hardline_command',
    });
    expect(lazy.checker.check('allow', call)).toEqual(eager.check('allow', call));
  });

  it('a parser that fails to load fails the decision, and a later decision retries the load', async () => {
    let attempts = 0;
    const checker = await createPolicyChecker(loaded, {
      lazyShell: true,
      loadShell: () => {
        attempts++;
        return attempts === 1 ? Promise.reject(new Error('grammar missing')) : loadShellAnalyzer();
      },
    });
    const call: ToolCall = { tool: 'shell', args: { command: 'ls' } };
    await expect(checker.decide('ask', call)).rejects.toThrow('grammar missing');
    expect(await checker.decide('ask', call)).toEqual(eager.check('ask', call));
    expect(attempts).toBe(2);
  });
});
