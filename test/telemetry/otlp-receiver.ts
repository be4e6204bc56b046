import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver took: its path, headers and raw body bytes. */
export interface OtlpRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A span as the OTLP/HTTP JSON encoding carries it, with its attributes flattened. */
export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly attrs: Record<string, string | number | boolean>;
  readonly status: number;
}

/** A local OTLP/HTTP receiver (JSON): it keeps every request's raw bytes and answers 200. */
export class OtlpReceiver {
  readonly requests: OtlpRequest[] = [];
  #server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** Every exported byte, all requests together. */
  allBytes(): Buffer {
    return Buffer.concat(this.requests.map((r) => r.body));
  }

  /** Every span exported so far. */
  spans(): ExportedSpan[] {
    const out: ExportedSpan[] = [];
    for (const r of this.requests.filter((q) => q.path === '/v1/traces')) {
      const doc = JSON.parse(r.body.toString('utf8')) as {
        resourceSpans: { scopeSpans: { spans: RawSpan[] }[] }[];
      };
      for (const rs of doc.resourceSpans)
        for (const ss of rs.scopeSpans) for (const s of ss.spans) out.push(flatten(s));
    }
    return out.sort((a, b) => a.start - b.start);
  }

  /** The names of every metric exported so far. */
  metricNames(): Set<string> {
    const names = new Set<string>();
    for (const r of this.requests.filter((q) => q.path === '/v1/metrics')) {
      const doc = JSON.parse(r.body.toString('utf8')) as {
        resourceMetrics: { scopeMetrics: { metrics: { name: string }[] }[] }[];
      };
      for (const rm of doc.resourceMetrics)
        for (const sm of rm.scopeMetrics) for (const m of sm.metrics) names.add(m.name);
    }
    return names;
  }
}

interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: {
    key: string;
    value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
  }[];
  status?: { code?: number };
}

function flatten(s: RawSpan): ExportedSpan {
  const attrs: Record<string, string | number | boolean> = {};
  for (const a of s.attributes ?? []) {
    const v = a.value;
    attrs[a.key] =
      v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));
  }
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId ?? '',
    name: s.name,
    start: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
    end: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
    attrs,
    status: s.status?.code ?? 0,
  };
}
