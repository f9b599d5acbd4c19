import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { apiReferenceHtml, REFERENCE_CSS } from "./ApiReference.js"
import { CONTENT_SECURITY_POLICY, INDEX_HTML, webAssets } from "./Assets.js"

/**
 * The web application and the API reference, served by the same server as the APIs:
 * GET / (the page), /assets/* (its script and styles), /api/public/v1/docs (the reference),
 * (the cookie-authenticated read twins the pages call are endpoints of the dashboard API: Twins.ts).
 */

const SECURITY_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-cache"
}

const html = (body: string) => HttpServerResponse.text(body, { contentType: "text/html; charset=utf-8", headers: SECURITY_HEADERS })

const asset = (name: string) =>
  Effect.promise(() => webAssets()).pipe(
    Effect.map((assets) => {
      const found = assets.get(name)!
      return HttpServerResponse.text(found.body, { contentType: found.contentType, headers: SECURITY_HEADERS })
    })
  )

export const WebAppLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    yield* router.get("/", Effect.succeed(html(INDEX_HTML)))
    yield* router.get("/assets/app.js", asset("app.js"))
    yield* router.get("/assets/app.css", asset("app.css"))
    yield* router.get(
      "/assets/reference.css",
      Effect.succeed(HttpServerResponse.text(REFERENCE_CSS, { contentType: "text/css; charset=utf-8", headers: SECURITY_HEADERS }))
    )
    yield* router.get("/api/public/v1/docs", Effect.sync(() => html(apiReferenceHtml())))
  })
)

export const WebLive = WebAppLive
