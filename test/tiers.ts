/**
 * The suite's two tiers. `unit` (npm run test:unit) is the inner loop: files that start no child
 * process, server or socket (test/support/unit-guard.ts makes any such call throw there, so a
 * file listed here cannot quietly stop being one) and take seconds, not minutes. `integration`
 * is everything else: real nats-servers, CLI and runtime child processes, the sandbox, the
 * browser, crash sampling, and the model-based paths. A new file is integration until listed here.
 *
 * In both tiers files share their worker's modules (isolate: false in vitest.config.ts): a module
 * is evaluated once per worker, not once per file, which takes about a third off the suite's CPU
 * time. So a file mocks no module and stubs no global (vi.mock, vi.doMock, vi.stubGlobal,
 * vi.stubEnv), restores what it sets in process.env, and a helper registers its clean-ups with
 * afterEachTest (test/support/cleanup.ts), never with a hook at its top level. A file that cannot
 * (it mocks a module, or runs vitest itself) is listed in ISOLATED_FILES and runs alone in a fresh
 * worker, as every file once did. test/harness/tiers.test.ts checks all of this.
 */
export const UNIT_FILES: readonly string[] = [
  'test/bus-auth/grants.test.ts',
  'test/bus/envelope.test.ts',
  'test/bus/subjects.test.ts',
  'test/checkpoints/before-run.test.ts',
  'test/checkpoints/restore-safety.test.ts',
  'test/checkpoints/retention.test.ts',
  'test/cli/plain-command-line.test.ts',
  'test/cli/completion.test.ts',
  'test/config/config.test.ts',
  'test/config/goal-loops.test.ts',
  'test/config/json-schema.test.ts',
  'test/config/json-text.test.ts',
  'test/config/platforms.test.ts',
  'test/goal/goal-epoch-guard.test.ts',
  'test/harness/child-scripts.test.ts',
  'test/harness/import-cycles.test.ts',
  'test/harness/tiers.test.ts',
  'test/inspect/tree-redaction.test.ts',
  'test/inspect/tree-replay.test.ts',
  'test/machines/approval-and-tool-call.test.ts',
  'test/machines/run-budget.test.ts',
  'test/machines/run-id.test.ts',
  'test/machines/run-machine.test.ts',
  'test/mcp/config.test.ts',
  'test/mcp/metadata.test.ts',
  'test/mcp/oversized-id.test.ts',
  'test/model/fragmentation.test.ts',
  'test/model/sse.test.ts',
  'test/model/tool-schemas.test.ts',
  'test/package/parse-config.test.ts',
  'test/platforms/journal-store.test.ts',
  'test/platforms/split.test.ts',
  'test/platforms/in-flight.test.ts',
  'test/platforms/send-pace.test.ts',
  'test/platforms/undelivered-paging.test.ts',
  'test/policy/approvals.test.ts',
  'test/policy/decision-detail.test.ts',
  'test/policy/delegation-chain.test.ts',
  'test/policy/delegation-envelope.test.ts',
  'test/policy/delegation-laws.test.ts',
  'test/policy/git-query-args.test.ts',
  'test/policy/glob-literals.test.ts',
  'test/policy/lazy-checker.test.ts',
  'test/policy/metadata.test.ts',
  'test/policy/paths-canonicalize.test.ts',
  'test/policy/paths-property.test.ts',
  'test/policy/paths-roots.test.ts',
  'test/policy/paths-sensitive.test.ts',
  'test/policy/paths-union.test.ts',
  'test/policy/paths-windows.test.ts',
  'test/policy/pattern-overlap.test.ts',
  'test/policy/properties.test.ts',
  'test/policy/rules-delegation.test.ts',
  'test/policy/rules-properties.test.ts',
  'test/policy/shell-corpus.test.ts',
  'test/policy/shell-bypass.test.ts',
  'test/policy/shell-failclosed-approvals.test.ts',
  'test/policy/shell-programs.test.ts',
  'test/policy/shell-properties.test.ts',
  'test/policy/shell-units.test.ts',
  'test/policy/simple-commands.test.ts',
  'test/runtime/hold-back.test.ts',
  'test/cli/watch-deltas.test.ts',
  'test/cli/chat-units.test.ts',
  'test/runtime/run-id-file.test.ts',
  'test/runtime/teardown-stack.test.ts',
  'test/secrets/args-at-rest-law.test.ts',
  'test/secrets/secrets.test.ts',
  'test/sessions/usage.test.ts',
  'test/secrets/references.test.ts',
  'test/sidecar/auth.test.ts',
  'test/sidecar/login-codes.test.ts',
  'test/sessions/context-window.test.ts',
  'test/provenance/approval-binding.test.ts',
  'test/provenance/policy-examples.test.ts',
  'test/store/approvals.test.ts',
  'test/store/audit-deferred.test.ts',
  'test/store/audit.test.ts',
  'test/store/cli-audit.test.ts',
  'test/store/encoding.test.ts',
  'test/store/session-titles.test.ts',
  'test/store/fast-parse.test.ts',
  'test/store/forbidden-key.test.ts',
  'test/store/grants.test.ts',
  'test/store/inbox-conformance.test.ts',
  'test/store/join-each-commit.test.ts',
  'test/store/ledger.test.ts',
  'test/store/migration-008.test.ts',
  'test/store/migrations.test.ts',
  'test/store/redaction-learning.test.ts',
  'test/store/redactor.test.ts',
  'test/store/snapshot-corpus.test.ts',
  'test/store/snapshot-envelope-fast.test.ts',
  'test/store/snapshots.test.ts',
  'test/tools/executors.test.ts',
  'test/tools/fs-tools.test.ts',
  'test/tools/observation.test.ts',
  'test/tools/search.test.ts',
  'test/telemetry/config.test.ts',
  'test/telemetry/observer.test.ts',
  'test/viz/viz.test.ts',
  'test/web/words.test.ts',
];

/** Integration files that need a fresh worker of their own (see above), with the reason. */
export const ISOLATED_FILES: readonly string[] = [
  // vi.mock('node:util'): a module another file loaded first would keep the real parseArgs.
  'test/cli/flags-and-exits.test.ts',
  // Runs vitest itself on fixtures that block a worker; its children inherit the worker's state.
  'test/harness/stall-watchdog.test.ts',
];

/**
 * The files that take longest (wall time, slowest first), started before all others
 * (test/support/sequencer.ts) so that none of them starts last. From the runs of bench/README.md's
 * suite section; a file missing here only costs time.
 */
export const LONG_FILES: readonly string[] = [
  'test/contract/matrix.test.ts',
  'test/package/pack.test.ts',
  'test/runtime/schedule-exactly-once.test.ts',
  'test/model-based/goal-paths.test.ts',
  'test/package/bundle.test.ts',
  'test/runtime/lifecycle-kills.test.ts',
  'test/cluster/failover.test.ts',
  'test/runtime/exactly-once.test.ts',
  'test/model-based/run-restart.test.ts',
  'test/model-based/run-restart-sigkill.test.ts',
  'test/cli/boot-failures.test.ts',
  'test/store/crash.test.ts',
  'test/model-based/power-loss.test.ts',
  'test/platforms/restart.test.ts',
  'test/goal/goal-process.test.ts',
];
