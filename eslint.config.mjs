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
