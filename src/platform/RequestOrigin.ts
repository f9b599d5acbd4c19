import type { HttpServerRequest } from "@effect/platform"

/**
 * The origin (scheme, host and port) a client used to reach this server: the X-Forwarded-Proto/-Host
 * of the proxy only with TRUST_PROXY (any client can send those headers), else the Host header, else
 * the request URL's (docs/security.md). URLs the server hands out (the tag snippet) are built on it
 * when PUBLIC_URL is unset.
 */
export const requestOrigin = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  const first = (value: string | undefined) => value?.split(",")[0]?.trim() || undefined
  const forwarded = (name: string) => (trustProxy ? first(request.headers[name]) : undefined)
  const sourceUrl = request.source instanceof Request ? new URL(request.source.url) : undefined
  const host = forwarded("x-forwarded-host") ?? request.headers["host"] ?? sourceUrl?.host ?? "localhost"
  const proto = forwarded("x-forwarded-proto") ?? sourceUrl?.protocol.replace(":", "") ?? "http"
  return `${proto === "https" ? "https" : "http"}://${host.replace(/[^A-Za-z0-9.:\-[\]]/g, "")}`
}
