import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Layer } from "effect"

/**
 * What the engine adapter tests share: the recorded provider bodies (test/fixtures/engines, written to
 * the official SDKs' types and the providers' documented JSON) and an HttpClient that never leaves the
 * machine: Gemini's grounding redirects (vertexaisearch.cloud.google.com) go to the local fake
 * provider, which answers them as Google does (a 302 to the source), or fails them.
 */

export const fixture = (name: string): Promise<unknown> => Bun.file(new URL(`../fixtures/engines/${name}.json`, import.meta.url)).json()

/** Where each grounding redirect of the Gemini fixture leads: a Location, or a failed resolution. */
export const REDIRECTS: Record<string, string | number> = {
  AbF9wXE1: "https://acme.com/startups",
  AbF9wXE2: 404, // unresolved: the chunk's title (g2.com) names the source
  AbF9wXE3: "https://www.globex.com/pricing",
  AbF9wXE4: 500 // unresolved, and its title is no domain: dropped
}

/** The fake provider's answer to GET /grounding-api-redirect/<id> (null: not such a request). */
export const redirectResponse = (url: URL): Response | null => {
  const match = /\/grounding-api-redirect\/([^/]+)$/.exec(url.pathname)
  if (match === null) return null
  const target = REDIRECTS[match[1]!]
  if (typeof target === "string") return new Response(null, { status: 302, headers: { location: target } })
  return new Response("no such redirect", { status: typeof target === "number" ? target : 404 })
}

/** Requests to Google's redirector are sent to `local` instead (same path); nothing else changes. */
export const localRedirects = (client: HttpClient.HttpClient, local: () => string): HttpClient.HttpClient =>
  HttpClient.mapRequest(client, (request) => {
    const url = new URL(request.url)
    return url.hostname === "vertexaisearch.cloud.google.com" ? HttpClientRequest.setUrl(request, `${local()}${url.pathname}`) : request
  })

/** FetchHttpClient with the redirector kept local. */
export const localHttpClient = (local: () => string) =>
  Layer.effect(HttpClient.HttpClient, Effect.map(HttpClient.HttpClient, (client) => localRedirects(client, local))).pipe(
    Layer.provide(FetchHttpClient.layer)
  )
