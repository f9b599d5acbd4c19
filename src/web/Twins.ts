import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Accounts } from "../accounts/Accounts.js"
import { SESSION_COOKIE } from "../accounts/Api.js"
import { ForwardedAccount } from "../accounts/Forwarded.js"
import { InProcessApp, InProcessAppLive } from "./InProcess.js"

/**
 * Cookie-authenticated twins of the public read endpoints the web application draws
 * (GET /api/v1/me/brands/{slug}/...). A twin checks the session, then runs the public
 * endpoint in process with the session's account: the same handler, service code, query
 * validation, status and body as with a key, and no key ever reaches the browser.
 */

const SLUG = /^[a-z0-9-]+$/

/** Twin suffix -> the public path it answers for (slug filled in), plus parameters it sets. */
export const TWINS: ReadonlyArray<{
  readonly twin: string
  readonly target: (slug: string) => { readonly path: string; readonly params?: Record<string, string> }
}> = [
  { twin: "agents", target: (slug) => ({ path: `/brands/${slug}/agents` }) },
  { twin: "agents/pages", target: (slug) => ({ path: `/brands/${slug}/agents/pages` }) },
  { twin: "search-performance", target: (slug) => ({ path: `/brands/${slug}/search-performance` }) },
  { twin: "attribution", target: (slug) => ({ path: `/brands/${slug}/attribution` }) },
  { twin: "snapshots", target: (slug) => ({ path: `/brands/${slug}/snapshots` }) },
  { twin: "mentions", target: (slug) => ({ path: `/brands/${slug}/mentions` }) },
  { twin: "prompts", target: (slug) => ({ path: `/brands/${slug}/prompts` }) },
  // Share of voice and engines of one brand: the brand selector of /industry/metrics and /model.
  { twin: "industry-metrics", target: (slug) => ({ path: "/industry/metrics", params: { brand: slug } }) },
  { twin: "model", target: (slug) => ({ path: "/model", params: { brand: slug } }) }
]

const notSignedIn = HttpServerResponse.unsafeJson({ error: "not signed in" }, { status: 401 })

const twinHandler = (target: (typeof TWINS)[number]["target"]) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { params } = yield* HttpRouter.RouteContext
    const accounts = yield* Accounts
    const inProcess = yield* InProcessApp
    const user = yield* Effect.either(accounts.authenticateSession(request.cookies[SESSION_COOKIE] ?? ""))
    if (user._tag === "Left") return notSignedIn
    const slug = params["slug"] ?? ""
    if (!SLUG.test(slug)) return HttpServerResponse.unsafeJson({ error: "invalid slug: must match ^[a-z0-9-]+$" }, { status: 400 })
    const { path, params: fixed } = target(slug)
    const query = new URLSearchParams(request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : "")
    for (const [name, value] of Object.entries(fixed ?? {})) query.set(name, value)
    const search = query.toString()
    // The host the browser used travels along, so URLs in the answer (the tag snippet) point back at it.
    const forwarded: Record<string, string> = {}
    for (const name of ["host", "x-forwarded-host", "x-forwarded-proto"] as const) {
      const value = request.headers[name]
      if (value !== undefined) forwarded[name === "host" ? "x-forwarded-host" : name] = value
    }
    return yield* inProcess.run({
      method: "GET",
      url: `/api/public/v1${path}${search === "" ? "" : `?${search}`}`,
      headers: forwarded
    }).pipe(
      Effect.provideService(ForwardedAccount, { accountId: user.right.accountId, keyId: `session:${user.right.userId}` })
    )
  })

export const TwinsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Accounts | InProcessApp>()
    for (const { target, twin } of TWINS) {
      yield* router.get(`/api/v1/me/brands/:slug/${twin}`, Effect.provide(twinHandler(target), context))
    }
  })
).pipe(Layer.provide(InProcessAppLive))
