import type { SecretResolver } from '../../actors/tools/types.ts';
import type { Config, TelemetryConfig } from '../config/schema.ts';
import type { RunFeedListener } from '../events.ts';
import type { StepModel } from '../run-feed.ts';
import type { TraceContextValues, TraceOf } from '../bus/index.ts';
import type { Store } from '../../store/index.ts';
import { createMetrics } from './metrics.ts';
import { TelemetryObserver } from './observer.ts';
import { createSdk } from './sdk.ts';

/** What telemetry is started with (runtime/boot/assemble.ts, only when `telemetry` is configured). */
export interface TelemetryDeps {
  readonly telemetry: NonNullable<TelemetryConfig>;
  readonly agents: Config['agents'];
  readonly secrets: SecretResolver;
  readonly store: Store;
  readonly clock: () => number;
  /** How often metrics are exported, in ms (default one minute; everything is flushed at stop). */
  readonly metricIntervalMs?: number;
}

/** Running telemetry: the feed listener, and the stop that ends open spans and flushes. */
export interface Telemetry {
  readonly listener: RunFeedListener;
  /** Hears the model each step's server named (RunFeed.onStepModel), with or without usage. */
  readonly stepModel: (e: StepModel) => void;
  /** A run's current trace context, for the NATS headers of the messages about it. */
  readonly traceOf: TraceOf;
  /** The trace context the message that starts a run came with: the run's span joins it. */
  readonly traceArrived: (runId: string, trace: TraceContextValues) => void;
  stop(): Promise<void>;
}

/**
 * Starts OpenTelemetry export. Header secret references resolve here (a missing one fails the
 * start, naming the header); every value resolved is registered with the redactor first, so no
 * span or metric can carry it.
 */
export async function startTelemetry(deps: TelemetryDeps): Promise<Telemetry> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(deps.telemetry.otlp.headers ?? {})) {
    try {
      headers[name] = typeof value === 'string' ? value : await deps.secrets.resolve(value);
    } catch (err) {
      throw new Error(`telemetry.otlp.headers.${name}: ${(err as Error).message}`, { cause: err });
    }
  }
  const sdk = createSdk({
    endpoint: deps.telemetry.otlp.endpoint,
    headers,
    sampleRatio: deps.telemetry.sampleRatio ?? 1,
    metricIntervalMs: deps.metricIntervalMs ?? 60_000,
  });
  const { store } = deps;
  const observer = new TelemetryObserver({
    tracer: sdk.tracer,
    metrics: createMetrics(sdk.meter, () => store.approvals.listPending().length),
    redactor: store.redactor,
    captureContent: deps.telemetry.captureContent === true,
    modelOf: (agentId) => {
      const model = deps.agents[agentId]?.model;
      return model === undefined ? null : { provider: model.provider, model: model.model ?? null };
    },
    saveTrace: (runId, traceparent, attrs) => store.runTraces.put(runId, traceparent, attrs),
    loadTrace: (runId) => store.runTraces.get(runId),
    approval: (id) => store.approvals.get(id),
  });
  return {
    listener: observer.listener,
    stepModel: observer.stepModel,
    traceOf: (runId) => observer.traceOf(runId),
    traceArrived: (runId, trace) => observer.parentArrived(runId, trace.traceparent),
    async stop() {
      observer.suspendAll(deps.clock());
      await sdk.shutdown();
    },
  };
}
