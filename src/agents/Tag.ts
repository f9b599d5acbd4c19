import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { Brands, isSiteId } from "../brands/Brands.js"
import { loadCatalog, markersFor } from "../catalog/Classifier.js"
import { Ingestion } from "../ingestion/Ingestion.js"
import { clientIp } from "../platform/ClientIp.js"
import { AppConfig } from "../platform/Config.js"
import { isRecord } from "../platform/Guards.js"
import { RateLimiter, rateLimitedResponse, withRateLimitHeaders } from "../platform/RateLimiter.js"
import { publicBaseOf, publicBaseVary } from "./Http.js"

/**
 * The JavaScript tag (docs/agents.md): GET /tag.js?site_id=<uuid> serves a small script bound
 * to that site; on each page load whose User-Agent carries a marker of the crawler catalog it posts
 * {s: site id, u: path and query, h: host, r: referrer} to POST /tag/collect with navigator.sendBeacon
 * (text/plain: no CORS preflight). The collect endpoint is public (the site id is public anyway),
 * has its own allowance (per site, per client IP, per day; never the server-log cap), classifies the request's User-Agent header with the same catalog, and
 * stores an agent's page load through the ingestion path with channel `tag`.
 */

export const TAG_PATH = "/tag.js"
export const COLLECT_PATH = "/tag/collect"
const MAX_COLLECT_BYTES = 8192

/** Lower-case substrings every User-Agent the catalog recognises contains (the classifier's own prefilter). */
export const tagMarkers = (): ReadonlyArray<string> =>
  markersFor(loadCatalog().agents.filter((a) => a.robots_only !== true).flatMap((a) => a.patterns))

/** The script for one site; collectUrl is absolute. Kept under 2 KB (a test checks it). */
export const tagScript = (siteId: string, collectUrl: string, markers: ReadonlyArray<string>) =>
  `/* AI agent tag: reports page loads of AI agents that run JavaScript. site ${siteId} */\n` +
  `(function(){try{var n=navigator,a=(n.userAgent||"").toLowerCase(),m=${JSON.stringify(markers.join("|"))}.split("|"),i=0;` +
  `for(;i<m.length;i++)if(a.indexOf(m[i])>=0)break;if(i==m.length)return;` +
  `var u=${JSON.stringify(collectUrl)},l=location,d=JSON.stringify({s:${JSON.stringify(siteId)},u:l.pathname+l.search,h:l.host,r:document.referrer});` +
  `if(n.sendBeacon&&n.sendBeacon(u,d))return;` +
  `fetch(u,{method:"POST",body:d,keepalive:true,mode:"no-cors",credentials:"omit"})}catch(e){}})();\n`

const CORS = { "access-control-allow-origin": "*" }
const status = (code: number, error?: string) =>
  error === undefined
    ? HttpServerResponse.empty({ status: code, headers: CORS })
    : HttpServerResponse.unsafeJson({ error }, { status: code, headers: CORS })

/** The body as text, or null past `max` bytes (read no further than that, whatever the headers said). */
const readAtMost = (request: HttpServerRequest.HttpServerRequest, max: number): Effect.Effect<string | null> => {
  const source = request.source
  if (!(source instanceof Request)) return Effect.orElseSucceed(request.text, () => "")
  if (source.body === null) return Effect.succeed("")
  const body = source.body
  return Effect.promise(async () => {
    const reader = body.getReader()
    const chunks: Array<Uint8Array> = []
    let total = 0
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        total += value.byteLength
        if (total > max) {
          await reader.cancel().catch(() => undefined)
          return null
        }
        chunks.push(value)
      }
    } catch {
      return ""
    }
    return Buffer.concat(chunks).toString("utf8")
  })
}

const str = (v: unknown, max: number) => (typeof v === "string" ? v.slice(0, max) : "")

export const TagLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const ingestion = yield* Ingestion
    const brands = yield* Brands
    const limiter = yield* RateLimiter
    const markers = tagMarkers()
    const appConfig = yield* AppConfig
    const vary = publicBaseVary(appConfig.publicUrl, appConfig.trustProxy)

    yield* router.get(
      TAG_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const params = yield* HttpServerRequest.ParsedSearchParams
        const raw = params["site_id"]
        const siteId = (typeof raw === "string" ? raw : raw?.[0] ?? "").trim()
        const js = (body: string, code: number, cache: string) =>
          HttpServerResponse.text(body, {
            status: code,
            contentType: "text/javascript; charset=utf-8",
            headers: { ...CORS, "cache-control": cache, "x-content-type-options": "nosniff" }
          })
        if (!isSiteId(siteId)) return js("/* invalid site_id: must be the brand's site id (a UUID) */\n", 400, "no-store")
        if (Option.isNone(yield* brands.findSite(siteId))) return js("/* unknown site_id */\n", 404, "no-store")
        // From PUBLIC_URL, or from headers a shared cache keys on (Vary): never an untrusted proxy header.
        const collectUrl = `${publicBaseOf(request, appConfig.publicUrl, appConfig.trustProxy)}${COLLECT_PATH}`
        const answer = js(tagScript(siteId.toLowerCase(), collectUrl, markers), 200, "public, max-age=3600")
        return vary === undefined ? answer : HttpServerResponse.setHeader(answer, "vary", vary)
      })
    )

    yield* router.post(
      COLLECT_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const length = Number(request.headers["content-length"] ?? 0)
        if (length > MAX_COLLECT_BYTES) return status(413, "body too large")
        // Counted as it is read, so a chunked body (no Content-Length) stops at the cap too.
        const text = yield* readAtMost(request, MAX_COLLECT_BYTES)
        if (text === null) return status(413, "body too large")
        let body: Record<string, unknown> = {}
        try {
          const parsed: unknown = JSON.parse(text)
          if (isRecord(parsed)) body = parsed
        } catch {
          return status(400, "invalid JSON body")
        }
        const siteId = str(body["s"], 64).trim().toLowerCase()
        if (!isSiteId(siteId)) return status(400, "invalid site_id")
        // The tag's own allowance: per site (a minute's, a day's) and per client IP (a day's), shared by
        // every server process through Redis when REDIS_URL is set (RateLimiter). Never the server-log cap.
        const ip = clientIp(request, appConfig.trustProxy)
        const decision = yield* limiter.checkCollect(siteId, ip ?? "unknown")
        if (Option.isSome(decision) && !decision.value.allowed) {
          return HttpServerResponse.setHeaders(rateLimitedResponse(decision.value), CORS)
        }
        const stored = yield* ingestion.tag({
          siteId,
          ua: str(request.headers["user-agent"], 1024),
          url: str(body["u"], 2048) || "/",
          host: str(body["h"], 255),
          referrer: str(body["r"], 1024),
          clientIp: ip
        }).pipe(
          Effect.map(() => withRateLimitHeaders(status(204), decision)),
          Effect.catchTags({
            NotFound: (e) => Effect.succeed(status(404, e.error)),
            QuotaExceeded: (e) => Effect.succeed(status(429, e.error))
          })
        )
        return stored
      })
    )
  })
)
