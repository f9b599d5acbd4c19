import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { CurrentAccount } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { encodedJson } from "../platform/FastJson.js"
import { Agents, dashboardWire, pagesWire } from "./Agents.js"
import { AgentPagesResponse, AgentsResponse } from "./Api.js"
import { AppConfig } from "../platform/Config.js"
import { AgentsConfig } from "./Config.js"

/**
 * The server's base URL for the tag snippet: PUBLIC_URL when set; else from the request, the
 * X-Forwarded-Proto/-Host of the proxy only with TRUST_PROXY (any client can send those headers),
 * else the Host header, else the request URL's host (docs/security.md).
 */
export const publicBaseOf = (request: HttpServerRequest.HttpServerRequest, configured: Option.Option<string>, trustProxy = false) => {
  if (Option.isSome(configured)) return configured.value
  const first = (value: string | undefined) => value?.split(",")[0]?.trim() || undefined
  const forwarded = (name: string) => (trustProxy ? first(request.headers[name]) : undefined)
  const sourceUrl = request.source instanceof Request ? new URL(request.source.url) : undefined
  const host = forwarded("x-forwarded-host") ?? request.headers["host"] ?? sourceUrl?.host ?? "localhost"
  const proto = forwarded("x-forwarded-proto") ?? sourceUrl?.protocol.replace(":", "") ?? "http"
  return `${proto === "https" ? "https" : "http"}://${host.replace(/[^A-Za-z0-9.:\-[\]]/g, "")}`
}

/** The request headers a base URL from publicBaseOf depends on, for `Vary` (none with PUBLIC_URL). */
export const publicBaseVary = (configured: Option.Option<string>, trustProxy: boolean): string | undefined =>
  Option.isSome(configured) ? undefined : trustProxy ? "Host, X-Forwarded-Host, X-Forwarded-Proto" : "Host"

export const AgentsHttpLive = HttpApiBuilder.group(ServerApi, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const config = yield* AgentsConfig
    const { trustProxy } = yield* AppConfig
    return handlers
      // The hot reads leave in their wire form, encoded once (FastJson.ts).
      .handle("dashboard", ({ path, request, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          Effect.map(
            agents.dashboard(accountId, path.slug, urlParams, publicBaseOf(request, config.publicUrl, trustProxy)),
            (dashboard) => encodedJson(AgentsResponse, dashboardWire(dashboard))
          )))
      .handle("pages", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          Effect.map(agents.pages(accountId, path.slug, urlParams), (pages) => encodedJson(AgentPagesResponse, pagesWire(pages)))))
      .handle("searchPerformance", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.searchPerformance(accountId, path.slug, urlParams.range)))
      .handle("attribution", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.attribution(accountId, path.slug, urlParams.range)))
  }))
