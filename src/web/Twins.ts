import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { CurrentUser } from "../accounts/Api.js"
import { ForwardedAccount } from "../accounts/Forwarded.js"
import { ServerApi } from "../api.js"
import { AppConfig } from "../platform/Config.js"
import { requestOrigin } from "../platform/RequestOrigin.js"
import { InProcessApp, InProcessAppLive } from "./InProcess.js"

/**
 * Cookie-authenticated twins of the public read endpoints the web application draws
 * (GET /api/v1/me/brands/{slug}/... and the account-wide GET /api/v1/me/<public path>, declared in
 * src/web/TwinsApi.ts). The session is checked by
 * SessionAuth like every dashboard route; a twin then runs the public endpoint in process with the
 * session's account: the same handler, service code, query validation, status and body as with a
 * key, and no key ever reaches the browser.
 */

/** Twin suffix -> the public path it answers for (slug filled in), plus parameters it sets. */
export const TWINS: ReadonlyArray<{
  readonly twin: string
  readonly target: (slug: string) => { readonly path: string; readonly params?: Record<string, string> }
}> = [
  { twin: "agents", target: (slug) => ({ path: `/brands/${slug}/agents` }) },
  { twin: "agents/pages", target: (slug) => ({ path: `/brands/${slug}/agents/pages` }) },
  { twin: "agents/pages/bots", target: (slug) => ({ path: `/brands/${slug}/agents/pages/bots` }) },
  { twin: "search-performance", target: (slug) => ({ path: `/brands/${slug}/search-performance` }) },
  { twin: "attribution", target: (slug) => ({ path: `/brands/${slug}/attribution` }) },
  { twin: "snapshots", target: (slug) => ({ path: `/brands/${slug}/snapshots` }) },
  { twin: "mentions", target: (slug) => ({ path: `/brands/${slug}/mentions` }) },
  { twin: "prompts", target: (slug) => ({ path: `/brands/${slug}/prompts` }) },
  // Share of voice and engines of one brand: the brand selector of /industry/metrics and /model.
  { twin: "industry-metrics", target: (slug) => ({ path: "/industry/metrics", params: { brand: slug } }) },
  { twin: "model", target: (slug) => ({ path: "/model", params: { brand: slug } }) },
  { twin: "actions", target: (slug) => ({ path: `/brands/${slug}/actions` }) }
]

const targetOf = (twin: string) => {
  const entry = TWINS.find((t) => t.twin === twin)
  if (entry === undefined) throw new Error(`no dashboard twin ${twin}`)
  return entry.target
}

export const TwinsHttpLive = HttpApiBuilder.group(ServerApi, "twins", (handlers) =>
  Effect.gen(function*() {
    const inProcess = yield* InProcessApp
    const { trustProxy } = yield* AppConfig

    /** Runs the public endpoint `path` (plus fixed parameters) for the session's account. */
    const run = (
      request: HttpServerRequest.HttpServerRequest,
      path: string,
      fixed: Record<string, string> | undefined
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentUser> =>
      Effect.gen(function*() {
        const user = yield* CurrentUser
        // The query string as sent: the public endpoint validates it with its own schemas.
        const query = new URLSearchParams(request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : "")
        for (const [name, value] of Object.entries(fixed ?? {})) query.set(name, value)
        const search = query.toString()
        // The in-process request is addressed to the origin the browser used (its proxy's forwarded host
        // and scheme only with TRUST_PROXY), so URLs in the answer (the tag snippet) point back at it.
        return yield* inProcess.run({
          method: "GET",
          url: `/api/public/v1${path}${search === "" ? "" : `?${search}`}`,
          origin: requestOrigin(request, trustProxy)
        }).pipe(
          Effect.provideService(ForwardedAccount, { accountId: user.accountId, keyId: `session:${user.userId}` })
        )
        // The router supplies the platform services the in-process run asks for, as to every handler.
      }) as Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentUser>

    /** A brand twin: the public path of the slug. */
    const forward = (twin: string) => {
      const target = targetOf(twin)
      return ({ path: { slug }, request }: { readonly path: { readonly slug: string }; readonly request: HttpServerRequest.HttpServerRequest }) => {
        const { path, params } = target(slug)
        return run(request, path, params)
      }
    }

    /** An account-wide twin: the same path under /api/public/v1. */
    const forwardAccount = (publicPath: string) => ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
      run(request, publicPath, undefined)

    /** A competitor's twin: its name passed on percent-encoded, for the public endpoint to validate. */
    const forwardCompetitor = (suffix: string) =>
    ({ path: { name }, request }: { readonly path: { readonly name: string }; readonly request: HttpServerRequest.HttpServerRequest }) =>
      run(request, `/industry/competitors/${encodeURIComponent(name)}/${suffix}`, undefined)

    return handlers
      .handle("agents", forward("agents"))
      .handle("agentsPages", forward("agents/pages"))
      .handle("agentsPageBots", forward("agents/pages/bots"))
      .handle("searchPerformance", forward("search-performance"))
      .handle("attribution", forward("attribution"))
      .handle("snapshots", forward("snapshots"))
      .handle("mentions", forward("mentions"))
      .handle("prompts", forward("prompts"))
      .handle("industryMetrics", forward("industry-metrics"))
      .handle("model", forward("model"))
      .handle("actions", forward("actions"))
      .handle("portfolio", forwardAccount("/portfolio"))
      .handle("citations", forwardAccount("/citations"))
      .handle("fanouts", forwardAccount("/citations/fanouts"))
      .handle("topics", forwardAccount("/topics"))
      .handle("industryRanking", forwardAccount("/industry/ranking"))
      .handle("industryGap", forwardAccount("/industry/gap"))
      .handle("competitorCitations", forwardCompetitor("citations"))
      .handle("competitorPrompts", forwardCompetitor("prompts"))
  })).pipe(Layer.provide(InProcessAppLive))
