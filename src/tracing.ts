import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { FastifyRequest } from 'fastify'
import type { Tracer } from './lib/telemetry.js'
import { withDeadline } from './lib/deadline.js'

// OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set. src/server.ts imports this
// module lazily (await import) and only then: without the endpoint none of OpenTelemetry is
// loaded. What makes the spans, and why nothing has to be loaded before the modules it observes:
//  - each request: @fastify/otel, attached to every Fastify instance created after start
//    (registerOnInitialization listens on Fastify's diagnostics channel), a SERVER span named by
//    the contract's path template, continuing an incoming `traceparent`; its hooks and handler
//    run in that span's context;
//  - outgoing HTTP (the WorkOS SDK and the Slack Web API both use fetch): undici's
//    instrumentation, also on diagnostics channels, a CLIENT span each and `traceparent` injected;
//  - each SQL statement (pg and PGlite alike) and each SMTP send: our own spans through the
//    Tracer port (src/db/observed.ts, src/mail/mailer.ts), since pg's instrumentation would
//    never see PGlite and nodemailer has none.
// No module is patched (no require/import hooks), so there is no `--import` preload to get right.

export interface Tracing {
  /** The port handed to buildApp. */
  tracer: Tracer
  /** Exports what is buffered (tests, shutdown). */
  flush(): Promise<void>
  /** Flushes (for at most 2 s: a collector that is down must not hold the exit), then stops tracing. */
  shutdown(): Promise<void>
}

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `{endpoint}/v1/traces` (OTLP/HTTP, JSON). */
  endpoint: string
  serviceName: string
  version: string
}

export function startTracing (opts: TracingOptions): Tracing {
  const url = new URL('v1/traces', opts.endpoint.replace(/\/*$/, '/')).href
  const exporter = new OTLPTraceExporter({ url })
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.version }),
    spanProcessors: [new BatchSpanProcessor(exporter)]
  })
  // The global provider, the AsyncLocalStorage context manager and the W3C propagator.
  provider.register()
  const instrumentations = [
    new FastifyOtelInstrumentation({
      registerOnInitialization: true,
      // A span per hook would be a dozen more per request, each to build, queue and export; the
      // request and handler spans keep every hook's work in the request's context without them
      // (the SQL of the session check, a preHandler hook, is tested to stay in the trace).
      instrumentHooks: false,
      // Named like the metrics' route label: the contract's path template, never the URL.
      requestHook: (span, request) => {
        const config = (request as FastifyRequest).routeOptions.config as { contractPath?: string } | undefined
        const path = config?.contractPath
        span.updateName(path !== undefined ? `${request.method} ${path}` : request.method)
        if (path !== undefined) span.setAttribute('http.route', path)
      }
    }),
    new UndiciInstrumentation()
  ]
  const tracer = trace.getTracer(opts.serviceName, opts.version)
  return {
    tracer: {
      async span (name, attributes, work) {
        return await tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async span => {
          try {
            return await work()
          } catch (err) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name })
            span.recordException(err as Error)
            throw err
          } finally {
            span.end()
          }
        })
      }
    },
    async flush () { await provider.forceFlush() },
    async shutdown () {
      for (const i of instrumentations) i.disable()
      await withDeadline(provider.shutdown(), 2000, 'exporting the last spans')
    }
  }
}
