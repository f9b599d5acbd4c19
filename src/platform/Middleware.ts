import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Option, Tracer } from "effect"
import { bearerToken, keyBucket, sessionBucket } from "./Bearer.js"
import { capChunkedBody } from "./BodyCap.js"
import { canonicalPath } from "./CanonicalPath.js"
import { clientIp as clientIpOf } from "./ClientIp.js"
import { AppConfig } from "./Config.js"
import { canonicalEmail } from "./Email.js"
import { SESSION_COOKIE_NAME } from "./Csrf.js"
import { guardedApp } from "./Edge.js"
import { headerRefusal } from "./HeaderCap.js"
import { InFlight, tooManyInFlight } from "./InFlight.js"
import { Lifecycle } from "./Lifecycle.js"
import { metrics } from "./Metrics.js"
import { type RateLimitCheck, type RateLimitDecision, rateLimitedResponse, rateLimitHeaders, RateLimiter } from "./RateLimiter.js"
import { logTimestamp, RequestLog } from "./RequestLog.js"
import { type RequestFacts, RequestMeta } from "./RequestMeta.js"
import { type PrecomputedRoute, PrecomputedRoutes, routeKey } from "./PrecomputedRoutes.js"
import { captureRoute, type RouteCapture } from "./RouteCapture.js"

/**
 * The edge: the one middleware every request passes through before routing, the APIs, the web
 * app and /mcp alike (docs/operations.md). On the way in: a request id, draining at shutdown,
 * the body cap, the rate limits of the public surface and of sign-in, the request-target check
 * and the CSRF guard (Edge.ts); then a precomputed route's answer (PrecomputedRoutes.ts), else the
 * router's. On the way out: failures as JSON errors (Edge.ts), the security
 * headers, one JSON log line and the request metrics. One middleware rather than several: each
 * wrapper costs every request a context copy and a few fibers' steps (bench/brands-rps.ts).
 */

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
/** A read of the public surface: GET or HEAD, and POST /mcp (its tools are the public reads). */
const isPublicRead = (method: string, path: string) => method === "GET" || method === "HEAD" || path === "/mcp"
/** A read of the cookie surface: the dashboard's GETs, the twins of the public reads among them. */
const isDashboardRead = (method: string, path: string) => (method === "GET" || method === "HEAD") && path.startsWith("/api/v1/")
const isSignIn = (method: string, path: string) =>
  method === "POST" && (path === "/api/v1/auth/login" || path === "/api/v1/auth/signup")

const DRAINING = HttpServerResponse.unsafeJson(
  { error: "shutting down" },
  { status: 503, headers: { connection: "close", "retry-after": "5" } }
)

type Served = Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>

/** The 429 of a read over its key's or session's bound, counted with the rate limits' refusals in /metrics. */
const refuseInFlight = (limit: number, holder: "API key" | "session"): Served =>
  Effect.sync(() => {
    metrics.rateLimited++
    return tooManyInFlight(limit, holder)
  })

/** The precomputed route's answer, else the router's; the route's name is caught for the log either way. */
const precomputedOr = (
  route: PrecomputedRoute,
  routed: HttpApp.Default,
  request: HttpServerRequest.HttpServerRequest,
  facts: RequestFacts,
  capture: RouteCapture
): HttpApp.Default =>
  Effect.flatMap(route.answer(request, facts), (answer) => {
    if (Option.isNone(answer)) return routed
    capture.route = route.path
    return Effect.succeed(answer.value)
  })

/** The edge middleware; `apiErrors` are the error tags the served API declares (Edge.ts, apiErrorTags). */
export const edgeMiddleware = (apiErrors: ReadonlySet<string>) =>
  HttpApiBuilder.middleware(
    Effect.gen(function*() {
      const config = yield* AppConfig
      const limiter = yield* RateLimiter
      const lifecycle = yield* Lifecycle
      const requestLog = yield* RequestLog
      const precomputed = yield* PrecomputedRoutes
      const rules = limiter.rules
      const { perKey: readsPerKey, perSession: readsPerSession } = config.concurrentReads
      const inFlight = new InFlight()
      const log = config.logRequests
      const tooLarge = HttpServerResponse.unsafeJson(
        { error: `request body too large: at most ${config.maxBodyBytes} bytes` },
        { status: 413, headers: { connection: "close" } }
      )

      return (routed: HttpApp.Default): HttpApp.Default => {
        const app: Served = guardedApp(routed, apiErrors)
        return Effect.flatMap(Effect.context<HttpServerRequest.HttpServerRequest>(), (context): Served => {
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
          // The slot of InFlight this request holds, given back with its answer.
          let held: string | undefined
          const release = () => {
            if (held === undefined) return
            inFlight.release(held)
            held = undefined
          }
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
            release()
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
              requestLog.write(
                `{"timestamp":"${logTimestamp()}","logLevel":"INFO","message":"request","method":"${request.method}",` +
                  `"route":${JSON.stringify(route)},"status":${response.status},"duration_ms":${Math.round(seconds * 100_000) / 100},` +
                  `"account_id":${facts.accountId},"request_id":"${facts.requestId}"}`
              )
            }
            return HttpServerResponse.setHeaders(response, headers)
          }

          /** The app, unless the limits refuse the request (a decision is noted for the headers either way). */
          const limited = (checks: ReadonlyArray<RateLimitCheck>, app: Served): Served => {
            const apply = (taken: RateLimitDecision | null): Served => {
              if (taken === null) return app
              decision = taken
              return taken.allowed ? app : Effect.succeed(rateLimitedResponse(taken))
            }
            if (checks.length === 0) return app
            // In-process buckets: decided here and now, no effect to run.
            if (limiter.checkNow !== undefined) return apply(limiter.checkNow(checks))
            return Effect.flatMap(limiter.check(checks), (outcome) => apply(Option.getOrNull(outcome)))
          }

          const admit = (): Served => {
            if (lifecycle.draining) return Effect.succeed(DRAINING)
            const oversized = headerRefusal(request)
            if (oversized !== undefined) return Effect.succeed(oversized)
            // A declared length over the cap is refused here, unread (see BodyCap.ts).
            if (declared !== undefined && Number(declared) > config.maxBodyBytes) return Effect.succeed(tooLarge)
            // The router's own spelling of the path: `/API/v1/auth/login/` or `//mcp` meets the same limits.
            const path = canonicalPath(request.url)
            if (isPublicSurface(path)) {
              const checks: Array<RateLimitCheck> = [{ bucket: "ip:" + clientIp(request, config.trustProxy), rule: rules.apiIp }]
              const boundReads = readsPerKey > 0 && isPublicRead(request.method, path)
              const token = rules.apiKey.limit > 0 || boundReads ? bearerToken(request.headers["authorization"]) : undefined
              if (token !== undefined) {
                const bucket = keyBucket(token)
                // Before any token is taken: a read refused here costs the key nothing.
                if (boundReads) {
                  if (!inFlight.tryTake(bucket, readsPerKey)) return refuseInFlight(readsPerKey, "API key")
                  held = bucket
                }
                if (rules.apiKey.limit > 0) checks.push({ bucket, rule: rules.apiKey })
              }
              const route = precomputed.size === 0 ? undefined : precomputed.get(routeKey(request.method, path))
              return limited(checks, route === undefined ? app : guardedApp(precomputedOr(route, routed, served, facts, capture), apiErrors))
            }
            if (isDashboardRead(request.method, path)) {
              // The dashboard's reads meet the public reads' limits: the session stands for the key.
              const checks: Array<RateLimitCheck> = [{ bucket: "dash-ip:" + clientIp(request, config.trustProxy), rule: rules.apiIp }]
              const session = rules.apiKey.limit > 0 || readsPerSession > 0 ? request.cookies[SESSION_COOKIE_NAME] : undefined
              if (session !== undefined && session !== "") {
                const bucket = sessionBucket(session)
                if (readsPerSession > 0) {
                  if (!inFlight.tryTake(bucket, readsPerSession)) return refuseInFlight(readsPerSession, "session")
                  held = bucket
                }
                if (rules.apiKey.limit > 0) checks.push({ bucket, rule: rules.apiKey })
              }
              return limited(checks, app)
            }
            if (!isSignIn(request.method, path)) return app
            const checks: Array<RateLimitCheck> = [{ bucket: "auth-ip:" + clientIp(request, config.trustProxy), rule: rules.authIp }]
            if (rules.authEmail.limit <= 0) return limited(checks, app)
            // The body stays readable afterwards: the platform caches it. Whatever its type, the email is
            // looked for (a body that is not JSON is refused 415 by the CSRF guard anyway).
            return Effect.flatMap(Effect.orElseSucceed(served.text, () => ""), (text) => {
              const email = signInEmail(text)
              // The canonical form the account look-up uses too: every spelling of one address shares a bucket.
              const key = typeof email === "string" ? canonicalEmail(email) : ""
              if (key !== "") checks.push({ bucket: "auth-email:" + key.slice(0, 320), rule: rules.authEmail })
              return limited(checks, app)
            })
          }

          const serve = Effect.flatMap(
            HttpApp.appendPreResponseHandler((_request, response) => Effect.sync(() => finish(response))),
            admit
          )

          return serve.pipe(
            // One merge (one copy of the request's context) for both entries.
            Effect.mapInputContext((input: Context.Context<HttpServerRequest.HttpServerRequest>) =>
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
                  release()
                }
              })
            )
          )
        })
      }
    })
  )
