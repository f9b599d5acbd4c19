import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Redacted, Tracer } from "effect"
import { timingSafeEqual } from "node:crypto"
import { readdirSync } from "node:fs"
import { sha256Hex } from "../accounts/KeyHashing.js"
import { Spool } from "../ingestion/Spool.js"
import { canonicalPath } from "./CanonicalPath.js"
import { clientIp as clientIpOf } from "./ClientIp.js"
import { AppConfig } from "./Config.js"
import { metrics } from "./Metrics.js"
import { migrationsDir } from "./Migrations.js"
import { type RateLimitCheck, type RateLimitDecision, rateLimitedResponse, rateLimitHeaders, RateLimiter } from "./RateLimiter.js"
import { Database } from "./Sql.js"

/**
 * What every request passes through before routing (docs/operations.md): a request id, the
 * rate limits of the public surface and of sign-in, and, on the way out, the security headers,
 * one JSON log line and the request metrics. Also the process lifecycle (in-flight requests,
 * draining at SIGTERM) and the operational routes GET /metrics and GET /readyz.
 */

// ---------------------------------------------------------------------------
// Lifecycle: in-flight requests and draining
// ---------------------------------------------------------------------------

interface StoppableServer {
  stop(closeActiveConnections?: boolean): unknown
}

export class LifecycleState {
  draining = false
  inFlight = 0
  private server: StoppableServer | undefined
  private waiters: Array<() => void> = []

  /** The Bun server a request came through (so draining can stop it listening). */
  noteServer(request: HttpServerRequest.HttpServerRequest): void {
    if (this.server !== undefined) return
    const server = (request as unknown as { bunServer?: StoppableServer }).bunServer
    if (server !== undefined && typeof server.stop === "function") this.server = server
  }

  begin(): void {
    this.inFlight++
    metrics.inFlight = this.inFlight
  }

  end(): void {
    this.inFlight--
    metrics.inFlight = this.inFlight
    if (this.inFlight === 0 && this.waiters.length > 0) {
      const waiters = this.waiters
      this.waiters = []
      for (const wake of waiters) wake()
    }
  }

  /** Stop taking new work: /readyz turns 503, new requests get 503, the listening socket closes. */
  startDraining(): void {
    if (this.draining) return
    this.draining = true
    try {
      // Graceful: Bun stops accepting connections and lets requests in progress finish.
      this.server?.stop(false)
    } catch {
      // already stopped
    }
  }

  /** Completes when no request is in flight. */
  readonly idle: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.inFlight <= 0) return resume(Effect.void)
    this.waiters.push(() => resume(Effect.void))
  })
}

export class Lifecycle extends Context.Tag("Lifecycle")<Lifecycle, LifecycleState>() {}

export const LifecycleLive = Layer.sync(Lifecycle, () => new LifecycleState())

// ---------------------------------------------------------------------------
// Per-request facts gathered on the way in, read on the way out
// ---------------------------------------------------------------------------

export interface RequestFacts {
  readonly requestId: string
  /** Set by the auth middlewares once they know the account. */
  accountId: number | null
}

/** Present while a request is served; nested in-process requests (twins, MCP tools) see the outer one. */
export class RequestMeta extends Context.Tag("RequestMeta")<RequestMeta, RequestFacts>() {}

/** Notes the authenticated account for the request log line (no-op outside a request). */
export const noteAccount = (accountId: number) =>
  Effect.serviceOption(RequestMeta).pipe(
    Effect.map((meta) => {
      if (Option.isSome(meta) && meta.value.accountId === null) meta.value.accountId = accountId
    })
  )

/**
 * The router names the matched route template on the request's parent span
 * (`http.route`). The tracer is off, so this stand-in span catches it, nothing else.
 */
const NO_ATTRIBUTES: ReadonlyMap<string, unknown> = new Map()
const STARTED = { _tag: "Started", startTime: 0n } as const
const EMPTY_CONTEXT = Context.empty()
const NO_LINKS: Array<Tracer.SpanLink> = []

/** The stand-in span's fixed parts live on its prototype: a request allocates one field. */
interface RouteCapture extends Tracer.Span {
  route: string | undefined
}
const routeCaptureProto: Omit<RouteCapture, "route"> = {
  _tag: "Span",
  name: "http.request",
  spanId: "route-capture",
  traceId: "route-capture",
  parent: Option.none(),
  context: EMPTY_CONTEXT,
  status: STARTED,
  attributes: NO_ATTRIBUTES,
  links: NO_LINKS,
  sampled: false,
  kind: "server",
  end() {},
  attribute(this: RouteCapture, key: string, value: unknown) {
    if (key === "http.route" && typeof value === "string") this.route = value
  },
  event() {},
  addLinks() {}
}
const captureRoute = (): RouteCapture => {
  const capture = Object.create(routeCaptureProto) as RouteCapture
  capture.route = undefined
  return capture
}

const REQUEST_ID = /^[A-Za-z0-9._:@\/+=-]{1,128}$/

const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["x-content-type-options", "nosniff"],
  ["x-frame-options", "DENY"],
  ["referrer-policy", "no-referrer"],
  // API answers are data, never a document: nothing may load from them or frame them.
  ["content-security-policy", "default-src 'none'; frame-ancestors 'none'"]
]

const clientIp = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string =>
  clientIpOf(request, trustProxy) ?? "unknown"

export const bearerToken = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const header = authorization.trim()
  const space = header.indexOf(" ")
  if (space === -1 || header.slice(0, space).toLowerCase() !== "bearer") return undefined
  const token = header.slice(space + 1).trim()
  return token === "" ? undefined : token
}

/** A key's bucket is named by a digest of the key: no secret is kept in Redis. (The bearer check reuses the digest.) */
export const keyBucket = (token: string) => "key:" + sha256Hex(token).slice(0, 32)

/** The email of a sign-in body: JSON, or form-urlencoded (a multipart or other body names none readable here). */
const signInEmail = (text: string): unknown => {
  try {
    const body: unknown = JSON.parse(text)
    return typeof body === "object" && body !== null && "email" in body ? body.email : undefined
  } catch {
    try {
      return new URLSearchParams(text).get("email") ?? undefined
    } catch {
      return undefined
    }
  }
}

const isPublicSurface = (path: string) => path.startsWith("/api/public/v1/") || path === "/mcp"
const isSignIn = (method: string, path: string) =>
  method === "POST" && (path === "/api/v1/auth/login" || path === "/api/v1/auth/signup")

/**
 * Request lines are buffered and written to stdout in batches (every 100 ms, at 64 KiB, and at
 * exit): a write per request cost about a sixth of GET /brands' throughput (bench/brands-rps.ts).
 */
let pending: Array<string> = []
let pendingBytes = 0
let flushTimer: ReturnType<typeof setTimeout> | undefined
export const flushRequestLog = () => {
  if (flushTimer !== undefined) {
    clearTimeout(flushTimer)
    flushTimer = undefined
  }
  if (pending.length === 0) return
  const text = pending.join("")
  pending = []
  pendingBytes = 0
  process.stdout.write(text)
}
process.once("exit", flushRequestLog)
const writeLine = (line: string) => {
  pending.push(line + "\n")
  pendingBytes += line.length + 1
  if (pendingBytes >= 65_536) flushRequestLog()
  else if (flushTimer === undefined) {
    flushTimer = setTimeout(flushRequestLog, 100)
    flushTimer.unref?.()
  }
}

const DRAINING = HttpServerResponse.unsafeJson(
  { error: "shutting down" },
  { status: 503, headers: { connection: "close", "retry-after": "5" } }
)

/**
 * Bun's own request body limit, set out of reach: Bun would answer a bare 413 (no JSON, no
 * request id, no security headers) before the app sees the request. The middleware enforces
 * MAX_BODY_BYTES instead: a declared length at once, unread; a chunked body as it is read.
 */
export const BUN_BODY_LIMIT = Number.MAX_SAFE_INTEGER

/** A chunked body (no declared length) counted as it is read: past `max` bytes the read fails. */
const capChunkedBody = (
  request: HttpServerRequest.HttpServerRequest,
  max: number,
  onOverflow: () => void
): HttpServerRequest.HttpServerRequest => {
  const source = request.source
  if (request.method === "GET" || request.method === "HEAD") return request
  if (!(source instanceof Request) || source.body === null) return request
  let total = 0
  const counted = source.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength
        if (total <= max) return controller.enqueue(chunk)
        onOverflow()
        controller.error(new Error("request body too large"))
      }
    })
  )
  const init: RequestInit & { duplex: "half" } = { method: source.method, headers: source.headers, body: counted, duplex: "half" }
  const remote = request.remoteAddress
  return HttpServerRequest.fromWeb(new Request(source.url, init)).modify({
    url: request.url,
    ...(Option.isSome(remote) ? { remoteAddress: remote.value } : {})
  })
}

/** The hardening middleware (HttpApi level: it wraps every route, the web app and /mcp included). */
export const HardeningMiddlewareLive = HttpApiBuilder.middleware(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const limiter = yield* RateLimiter
    const lifecycle = yield* Lifecycle
    const rules = limiter.rules
    const log = config.logRequests
    const tooLarge = HttpServerResponse.unsafeJson(
      { error: `request body too large: at most ${config.maxBodyBytes} bytes` },
      { status: 413, headers: { connection: "close" } }
    )

    return (app: HttpApp.Default): HttpApp.Default =>
      Effect.flatMap(Effect.context<HttpServerRequest.HttpServerRequest>(), (context) => {
        // A request run in process by another request (dashboard twin, MCP tool) is part of that one.
        if (context.unsafeMap.has(RequestMeta.key)) return app
        const request = Context.get(context, HttpServerRequest.HttpServerRequest)
        const started = performance.now()
        lifecycle.begin()
        lifecycle.noteServer(request)
        const incoming = request.headers["x-request-id"]
        const facts: RequestFacts = {
          requestId: incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID(),
          accountId: null
        }
        const capture = captureRoute()
        let decision: RateLimitDecision | undefined
        let finished = false
        let overflowed = false
        const declared = request.headers["content-length"]
        const served = declared === undefined && request.headers["transfer-encoding"] !== undefined
          ? capChunkedBody(request, config.maxBodyBytes, () => (overflowed = true))
          : request

        const finish = (answer: HttpServerResponse.HttpServerResponse) => {
          if (finished) return answer
          // Whatever the handler made of a body cut off at the cap (a decode error, mostly), it was too large.
          const response = overflowed ? tooLarge : answer
          finished = true
          lifecycle.end()
          const headers: Record<string, string> = { "x-request-id": facts.requestId }
          for (const [name, value] of SECURITY_HEADERS) if (response.headers[name] === undefined) headers[name] = value
          if (decision !== undefined && response.headers["ratelimit-limit"] === undefined) {
            Object.assign(headers, rateLimitHeaders(decision))
          }
          const seconds = (performance.now() - started) / 1000
          const route = capture.route ?? (response.status === 404 ? "(unmatched)" : "(edge)")
          metrics.observeRequest(request.method, route, response.status, seconds)
          if (log) {
            // Written out rather than through JSON.stringify of an object: one line per request.
            // The method is a token and the request id passed REQUEST_ID (or is a UUID): no escaping needed.
            writeLine(
              `{"timestamp":"${new Date().toISOString()}","logLevel":"INFO","message":"request","method":"${request.method}",` +
                `"route":${JSON.stringify(route)},"status":${response.status},"duration_ms":${Math.round(seconds * 100_000) / 100},` +
                `"account_id":${facts.accountId},"request_id":"${facts.requestId}"}`
            )
          }
          return HttpServerResponse.setHeaders(response, headers)
        }

        /** The app, unless the limits refuse the request (a decision is noted for the headers either way). */
        const limited = (checks: ReadonlyArray<RateLimitCheck>): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, any> => {
          const apply = (taken: RateLimitDecision | null) => {
            if (taken === null) return app
            decision = taken
            return taken.allowed ? app : Effect.succeed(rateLimitedResponse(taken))
          }
          if (checks.length === 0) return app
          // In-process buckets: decided here and now, no effect to run.
          if (limiter.checkNow !== undefined) return apply(limiter.checkNow(checks))
          return Effect.flatMap(limiter.check(checks), (outcome) => apply(Option.getOrNull(outcome)))
        }

        const admit = (): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, any> => {
          if (lifecycle.draining) return Effect.succeed(DRAINING)
          // A declared length over the cap is refused here, unread (see BUN_BODY_LIMIT).
          if (declared !== undefined && Number(declared) > config.maxBodyBytes) return Effect.succeed(tooLarge)
          // The router's own spelling of the path: `/API/v1/auth/login/` or `//mcp` meets the same limits.
          const path = canonicalPath(request.url)
          if (isPublicSurface(path)) {
            const checks: Array<RateLimitCheck> = [{ bucket: "ip:" + clientIp(request, config.trustProxy), rule: rules.apiIp }]
            const token = rules.apiKey.limit > 0 ? bearerToken(request.headers["authorization"]) : undefined
            if (token !== undefined) checks.push({ bucket: keyBucket(token), rule: rules.apiKey })
            return limited(checks)
          }
          if (!isSignIn(request.method, path)) return app
          const checks: Array<RateLimitCheck> = [{ bucket: "auth-ip:" + clientIp(request, config.trustProxy), rule: rules.authIp }]
          if (rules.authEmail.limit <= 0) return limited(checks)
          // The body stays readable afterwards: the platform caches it. Whatever its type, the email is
          // looked for (a body that is not JSON is refused 415 by the CSRF guard anyway).
          return Effect.flatMap(Effect.orElseSucceed(served.text, () => ""), (text) => {
            const email = signInEmail(text)
            if (typeof email === "string" && email.trim() !== "") {
              checks.push({ bucket: "auth-email:" + email.trim().toLowerCase().slice(0, 320), rule: rules.authEmail })
            }
            return limited(checks)
          })
        }

        const serve = Effect.flatMap(
          HttpApp.appendPreResponseHandler((_request, response) => Effect.sync(() => finish(response))),
          admit
        )

        return serve.pipe(
          // One merge (one copy of the request's context) for both entries.
          Effect.mapInputContext((input: Context.Context<never>) =>
            Context.merge(
              input,
              Context.make(RequestMeta, facts).pipe(
                Context.add(Tracer.ParentSpan, capture),
                (added) => served === request ? added : Context.add(added, HttpServerRequest.HttpServerRequest, served)
              )
            )
          ),
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              if (!finished) {
                finished = true
                lifecycle.end()
              }
            })
          )
        ) as unknown as HttpApp.Default
      })
  })
)

// ---------------------------------------------------------------------------
// GET /metrics and GET /readyz
// ---------------------------------------------------------------------------

/** The highest migration number shipped with this build (migrations/NNNN_name.sql). */
const latestMigration = (): number => {
  try {
    return Math.max(0, ...readdirSync(migrationsDir).map((file) => Number(/^(\d+)_.+\.sql$/.exec(file)?.[1] ?? 0)))
  } catch {
    return 0
  }
}

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest()

/** Constant-time comparison of a presented secret with the expected one (digests: equal lengths). */
export const secretEquals = (presented: string, expected: string) => timingSafeEqual(sha256(presented), sha256(expected))

export const OpsRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const database = yield* Database
    const spool = yield* Spool
    const lifecycle = yield* Lifecycle
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    const latest = latestMigration()

    const spoolDepth = Effect.map(spool.pending, (files) => files.length)

    /** The newest applied migration (null: no SQL client, as with the in-memory fakes); fails when unreachable. */
    const appliedMigration: Effect.Effect<number | null, unknown> = Option.match(sql, {
      onNone: () => Effect.as(database.ping, null),
      onSome: (sql) =>
        sql<{ id: number | null }>`select max(migration_id)::int as id from schema_migrations`.pipe(
          Effect.map((rows) => rows[0]?.id ?? 0)
        )
    })

    yield* router.get(
      "/readyz",
      Effect.gen(function*() {
        const [applied, depth] = yield* Effect.all([
          appliedMigration.pipe(Effect.timeout("2 seconds"), Effect.option),
          spoolDepth
        ], { concurrency: "unbounded" })
        const reachable = Option.isSome(applied)
        const checks = {
          database: reachable ? "ok" : "unreachable",
          migrations: !reachable
            ? "unknown"
            : applied.value === null || applied.value >= latest
            ? "ok"
            : `pending (${applied.value} of ${latest})`,
          spool: depth <= config.readySpoolMax ? "ok" : `overflowing (${depth} files, at most ${config.readySpoolMax})`,
          shutdown: lifecycle.draining ? "draining" : "ok"
        }
        const ready = Object.values(checks).every((value) => value === "ok")
        return ready
          ? HttpServerResponse.unsafeJson({ status: "ready", database: database.kind, spool_depth: depth, checks })
          : HttpServerResponse.unsafeJson({ error: "not ready", spool_depth: depth, checks }, { status: 503 })
      })
    )

    yield* router.get(
      "/metrics",
      Effect.gen(function*() {
        if (Option.isSome(config.metricsToken)) {
          const request = yield* HttpServerRequest.HttpServerRequest
          const token = bearerToken(request.headers["authorization"]) ?? ""
          if (!secretEquals(token, Redacted.value(config.metricsToken.value))) {
            return HttpServerResponse.unsafeJson({ error: "invalid metrics token" }, { status: 401 })
          }
        }
        const depth = yield* spoolDepth
        const pool = database.poolStats?.()
        const gauges = [
          { name: "aiv_spool_depth", help: "Drain deliveries waiting in the spool for the database.", value: depth },
          { name: "aiv_shutting_down", help: "1 while the process drains at shutdown.", value: lifecycle.draining ? 1 : 0 },
          ...(pool === undefined ? [] : [
            { name: "aiv_db_pool_connections", help: "Database pool connections by state.", value: pool.total - pool.idle, labels: { state: "busy" } },
            { name: "aiv_db_pool_connections", help: "", value: pool.idle, labels: { state: "idle" } },
            { name: "aiv_db_pool_max", help: "Largest number of pool connections.", value: pool.max },
            { name: "aiv_db_pool_waiting", help: "Queries waiting for a pool connection.", value: pool.waiting }
          ])
        ]
        return HttpServerResponse.text(metrics.render(gauges), { contentType: "text/plain; version=0.0.4; charset=utf-8" })
      })
    )
  })
)

/** Everything of this module the served app needs, for ApiLive. */
export const HardeningLive = Layer.mergeAll(HardeningMiddlewareLive, OpsRoutesLive)
