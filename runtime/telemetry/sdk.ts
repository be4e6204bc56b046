import type { Meter, Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';

/** What the SDK is built from: the config's `telemetry`, its header secrets resolved. */
export interface SdkOptions {
  readonly endpoint: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly sampleRatio: number;
  /** How often metrics are exported, in ms (also flushed at stop). */
  readonly metricIntervalMs: number;
}

/** The providers the observer uses, and their flush-and-close. */
export interface Sdk {
  readonly tracer: Tracer;
  readonly meter: Meter;
  /** Exports what is buffered and closes the exporters; never throws. */
  shutdown(): Promise<void>;
}

const SCOPE = 'snotra-runtime';

/**
 * Providers of its own (never the global ones: an embedder's own OpenTelemetry setup is left
 * alone) exporting OTLP/HTTP JSON to `endpoint` + `/v1/traces` and `/v1/metrics`.
 */
export function createSdk(options: SdkOptions): Sdk {
  const base = options.endpoint.replace(/\/+$/, '');
  const headers = { ...options.headers };
  const resource = resourceFromAttributes({ 'service.name': 'snotra-runtime' });
  const tracerProvider = new BasicTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${base}/v1/traces`, headers }))],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics`, headers }),
        exportIntervalMillis: options.metricIntervalMs,
      }),
    ],
  });
  return {
    tracer: tracerProvider.getTracer(SCOPE),
    meter: meterProvider.getMeter(SCOPE),
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
