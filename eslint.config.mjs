// Lint rules, including the layer direction of DESIGN.md §2:
// policy <- machines <- actors <- runtime <- surfaces; store beside runtime; nothing imports surfaces.
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** Folders a layer must never import from. */
const forbidden = {
  policy: ['machines', 'actors', 'runtime', 'surfaces', 'store'],
  machines: ['actors', 'runtime', 'surfaces', 'store'],
  actors: ['runtime', 'surfaces'],
  store: ['machines', 'actors', 'runtime', 'surfaces'],
  runtime: ['surfaces'],
  // A surface talks to the runtime, never to the store or the actors directly (DESIGN.md §2).
  surfaces: ['store', 'actors', 'machines'],
};

/** The test-only accessor of a runtime's internals (runtime/testing.ts): no product code imports it. */
const testOnly = {
  group: ['**/testing.ts'],
  message: 'runtime/testing.ts is for tests only: product code uses the Runtime and its read models.',
};

/** Extra import patterns a layer must not use: a surface reaches the runtime only through its index. */
const deepImports = {
  policy: [testOnly],
  machines: [testOnly],
  actors: [testOnly],
  store: [testOnly],
  runtime: [testOnly],
  surfaces: [
    {
      group: ['**/runtime/**', '!**/runtime/index.ts'],
      message:
        'surfaces/ import the runtime only through runtime/index.ts (its public entry point for surfaces, DESIGN.md §2).',
    },
    testOnly,
  ],
};

const layerRules = Object.entries(forbidden).map(([layer, banned]) => ({
  files: [`${layer}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...banned.map((b) => ({
            group: [`**/${b}/*`, `**/${b}`, `../${b}/*`],
            message: `${layer}/ must not import ${b}/ (DESIGN.md §2 layer direction).`,
          })),
          ...(deepImports[layer] ?? []),
        ],
      },
    ],
  },
}));

/**
 * Time is the runtime's injected `Clock` (runtime/time/): no product file reads wall time or arms
 * Node's timers itself, so a test that advances a simulated clock moves every deadline, expiry and
 * schedule at once. The files below wait on something that is not the runtime's time — a real
 * process, server, socket or HTTP peer, a human at a terminal — or stamp or measure a moment of
 * the machine; each says why. A new file joins this list only for such a reason.
 */
const wallTimeFiles = [
  // Waits on real child processes and servers (start, stop grace, ports files, health).
  'runtime/bus/embedded.ts',
  'runtime/bus/processes.ts',
  'runtime/bus/ports-file.ts',
  'runtime/processes/group.ts',
  'runtime/processes/run.ts',
  'runtime/cluster/local-cluster.ts',
  'surfaces/app/runtime-child.ts',
  // JetStream and NATS: retries while a quorum forms, lease refresh against the bucket's max age,
  // in-progress acks, a consumer reopened, a server probe, a flush bounded on shutdown.
  'runtime/cluster/retry.ts',
  'runtime/cluster/leases.ts',
  'runtime/cluster/work-queue.ts',
  'runtime/cluster/resume-worker.ts',
  'runtime/cluster/run-mirror.ts',
  'runtime/bus/consume-forever.ts',
  'runtime/bus/auth/actor-bus.ts',
  // Sockets and HTTP peers: keep-alives, close grace, joins, MCP servers, a model's Retry-After.
  'runtime/control/actor-stream.ts',
  'runtime/control/goals.ts',
  'surfaces/sidecar/sse.ts',
  'surfaces/join/server.ts',
  'surfaces/client/joined.ts',
  'surfaces/client/rewind.ts',
  'surfaces/mcp/service.ts',
  'surfaces/platforms/gateway.ts',
  'actors/mcp/connection.ts',
  'actors/mcp/call.ts',
  'actors/model/http.ts',
  // A measured duration or a machine-local moment (search time budget, keyring probe name,
  // the bus envelope's send time, a CLI's "since", its own output stamps and its exit grace).
  'actors/tools/search/search-files.ts',
  'runtime/secrets/keyring.ts',
  'runtime/bus/envelope.ts',
  'surfaces/cli/policy-replay.ts',
  'surfaces/cli/run/resume-check.ts',
  'surfaces/cli/main.ts',
  // The demo script paces itself for a person watching.
  'runtime/demo.ts',
];

/** Wall time and Node's timers, read or armed directly. */
const wallTimeSyntax = [
  ['CallExpression[callee.object.name="Date"][callee.property.name="now"]', 'Date.now()'],
  ['NewExpression[callee.name="Date"][arguments.length=0]', 'new Date()'],
  ['CallExpression[callee.name=/^(setTimeout|setInterval)$/]', "Node's setTimeout/setInterval"],
  [
    'CallExpression[callee.object.name="globalThis"][callee.property.name=/^(setTimeout|setInterval)$/]',
    "Node's setTimeout/setInterval",
  ],
].map(([selector, what]) => ({
  selector,
  message: `${what}: use the injected Clock (runtime/time/clock.ts: now, setTimeout, setInterval), so a simulated clock moves it; a wait on a real process or server is listed with its reason in eslint.config.mjs (wallTimeFiles).`,
}));

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.snotra/**',
      'coverage/**',
      'test/fixtures/**',
      'surfaces/sidecar/app/**',
      'dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  ...layerRules,
  {
    files: ['{policy,machines,actors,runtime,store,surfaces}/**/*.ts', 'index.ts'],
    ignores: ['runtime/time/**', ...wallTimeFiles],
    rules: { 'no-restricted-syntax': ['error', ...wallTimeSyntax] },
  },
  {
    // No import cycles in product code. Imports here name their `.ts` file, so the node resolver
    // finds every relative import as written; packages are not walked. Type-only imports are not
    // edges (they vanish at runtime).
    files: ['{policy,machines,actors,runtime,store,surfaces}/**/*.ts', 'index.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.json', '.node'] }),
      ],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
);
