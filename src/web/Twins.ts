import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import type { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import { CurrentUser } from "../accounts/Api.js"
import { ForwardedAccount } from "../accounts/Forwarded.js"
import { ServerApi } from "../api.js"
import { AppConfig } from "../platform/Config.js"
import { requestOrigin } from "../platform/RequestOrigin.js"
import { InProcessApp, InProcessAppLive } from "./InProcess.js"
import { TwinsGroup, TwinTarget } from "./TwinsApi.js"

/**
 * Cookie-authenticated twins of the public read endpoints the web application draws
 * (GET /api/v1/me/brands/{slug}/... and the account-wide GET /api/v1/me/<public path>, declared in
 * src/web/TwinsApi.ts). The session is checked by
 * SessionAuth like every dashboard route; a twin then runs the public endpoint in process with the
 * session's account: the same handler, service code, query validation, status and body as with a
 * key, and no key ever reaches the browser.
 */

/** The public request of a twin: its TwinTarget with the twin's path parameters filled in. */
const targetOf = (name: string, params: Readonly<Record<string, string>>) => {
  const endpoint = TwinsGroup.endpoints[name]
  const target = endpoint === undefined ? Option.none() : Context.getOption(endpoint.annotations, TwinTarget)
  if (Option.isNone(target)) throw new Error(`no public target for the dashboard twin ${name}`)
  const fill = (text: string) =>
    text.replace(/\{(\w+)\}/g, (_, key: string) => (key === "name" ? encodeURIComponent(params[key] ?? "") : params[key] ?? ""))
  const [path = "", query] = target.value.split("?")
  return { path: fill(path), params: query === undefined ? undefined : Object.fromEntries(new URLSearchParams(fill(query))) }
}

const BRAND_TWIN = "/me/brands/:slug/"

/** The brand twins, read from TwinsGroup: the path after /me/brands/{slug}/ and the public request of a slug. */
export const TWINS: ReadonlyArray<{
  readonly twin: string
  readonly target: (slug: string) => { readonly path: string; readonly params?: Record<string, string> | undefined }
}> = Object.values(TwinsGroup.endpoints).flatMap((endpoint) =>
  endpoint.path.startsWith(BRAND_TWIN)
    ? [{ twin: endpoint.path.slice(BRAND_TWIN.length), target: (slug: string) => targetOf(endpoint.name, { slug }) }]
    : []
)

export const TwinsHttpLive = HttpApiBuilder.group(ServerApi, "twins", (handlers) =>
  Effect.gen(function*() {
    const inProcess = yield* InProcessApp
    const { trustProxy } = yield* AppConfig

    /** Runs the public endpoint `path` (plus fixed parameters) for the session's account. */
    // allow-cast: the handler runs in the fiber of the dashboard request, which carries the server's DefaultServices.
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

    /** Every twin: its public endpoint (TwinTarget), run with the request's query and the twin's path. */
    const forward = (name: string) => {
      // Checked when the group is built, so a twin without a target fails at start, not at its first request.
      targetOf(name, {})
      return ({ path, request }: { readonly path?: Readonly<Record<string, string>>; readonly request: HttpServerRequest.HttpServerRequest }) => {
        const target = targetOf(name, path ?? {})
        return run(request, target.path, target.params)
      }
    }

    return handlers
      .handle("agents", forward("agents"))
      .handle("agentsPages", forward("agentsPages"))
      .handle("agentsPageBots", forward("agentsPageBots"))
      .handle("searchPerformance", forward("searchPerformance"))
      .handle("attribution", forward("attribution"))
      .handle("snapshots", forward("snapshots"))
      .handle("mentions", forward("mentions"))
      .handle("prompts", forward("prompts"))
      .handle("industryMetrics", forward("industryMetrics"))
      .handle("model", forward("model"))
      .handle("actions", forward("actions"))
      .handle("portfolio", forward("portfolio"))
      .handle("citations", forward("citations"))
      .handle("fanouts", forward("fanouts"))
      .handle("topics", forward("topics"))
      .handle("industryRanking", forward("industryRanking"))
      .handle("industryGap", forward("industryGap"))
      .handle("competitorCitations", forward("competitorCitations"))
      .handle("competitorPrompts", forward("competitorPrompts"))
  })).pipe(Layer.provide(InProcessAppLive))
