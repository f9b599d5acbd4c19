import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { CurrentAccount } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { encodedJson } from "../platform/FastJson.js"
import { Agents, dashboardWire, pagesWire } from "./Agents.js"
import { AgentPagesResponse, AgentsResponse } from "./Api.js"
import { AppConfig } from "../platform/Config.js"
import { requestOrigin } from "../platform/RequestOrigin.js"

/**
 * The server's base URL for the tag snippet: PUBLIC_URL when set; else the origin the request came
 * to (requestOrigin: the proxy's forwarded host and scheme only with TRUST_PROXY).
 */
export const publicBaseOf = (request: HttpServerRequest.HttpServerRequest, configured: Option.Option<string>, trustProxy = false) =>
  Option.isSome(configured) ? configured.value : requestOrigin(request, trustProxy)

/** The request headers a base URL from publicBaseOf depends on, for `Vary` (none with PUBLIC_URL). */
export const publicBaseVary = (configured: Option.Option<string>, trustProxy: boolean): string | undefined =>
  Option.isSome(configured) ? undefined : trustProxy ? "Host, X-Forwarded-Host, X-Forwarded-Proto" : "Host"

export const AgentsHttpLive = HttpApiBuilder.group(ServerApi, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const { publicUrl, trustProxy } = yield* AppConfig
    return handlers
      // The hot reads leave in their wire form, encoded once (FastJson.ts).
      .handle("dashboard", ({ path, request, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          Effect.map(
            agents.dashboard(accountId, path.slug, urlParams, publicBaseOf(request, publicUrl, trustProxy)),
            (dashboard) => encodedJson(AgentsResponse, dashboardWire(dashboard))
          )))
      .handle("pages", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          Effect.map(agents.pages(accountId, path.slug, urlParams), (pages) => encodedJson(AgentPagesResponse, pagesWire(pages)))))
      .handle("pageBots", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.pageBots(accountId, path.slug, urlParams)))
      .handle("searchPerformance", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.searchPerformance(accountId, path.slug, urlParams.range)))
      .handle("attribution", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.attribution(accountId, path.slug, urlParams.range)))
  }))
