import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { CurrentAccount } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { Agents } from "./Agents.js"
import { AgentsConfig } from "./Config.js"

/**
 * The server's base URL as the client reached it (for the tag snippet), unless PUBLIC_URL says:
 * X-Forwarded-Proto/-Host from a proxy, else the Host header, else the request URL's host.
 */
export const publicBaseOf = (request: HttpServerRequest.HttpServerRequest, configured: Option.Option<string>) => {
  if (Option.isSome(configured)) return configured.value
  const first = (value: string | undefined) => value?.split(",")[0]?.trim() || undefined
  const sourceUrl = request.source instanceof Request ? new URL(request.source.url) : undefined
  const host = first(request.headers["x-forwarded-host"]) ?? request.headers["host"] ?? sourceUrl?.host ?? "localhost"
  const proto = first(request.headers["x-forwarded-proto"]) ?? sourceUrl?.protocol.replace(":", "") ?? "http"
  return `${proto === "https" ? "https" : "http"}://${host.replace(/[^A-Za-z0-9.:\-[\]]/g, "")}`
}

export const AgentsLive = HttpApiBuilder.group(ServerApi, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const config = yield* AgentsConfig
    return handlers
      .handle("dashboard", ({ path, request, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          agents.dashboard(accountId, path.slug, urlParams, publicBaseOf(request, config.publicUrl))))
      .handle("pages", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.pages(accountId, path.slug, urlParams)))
      .handle("searchPerformance", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.searchPerformance(accountId, path.slug, urlParams.range)))
      .handle("attribution", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => agents.attribution(accountId, path.slug, urlParams.range)))
  }))
