import type { HttpServerRequest } from "@effect/platform"
import { canonicalPath } from "./CanonicalPath.js"

/**
 * The cross-site request forgery guard of the cookie surface (docs/security.md). A browser
 * attaches the session cookie by itself, so a state-changing request under /api/v1 (the only
 * place the cookie is honoured) must show it comes from this origin:
 *
 * - an Origin header naming another origin (or `null`) is refused, 403 `foreign origin`;
 * - with the session cookie and no Origin, it is refused unless Sec-Fetch-Site says
 *   `same-origin` (browsers send Origin on every POST, PUT, PATCH and DELETE anyway);
 * - a body must be JSON (or NDJSON): the three types an HTML form or a "simple" cross-site
 *   fetch can send (form-urlencoded, multipart, text/plain) never reach a handler, 415.
 *
 * The path is the router's own spelling (CanonicalPath), so `/API/v1/...`, `//api/v1/...` and
 * `/%61pi/v1/...` are guarded like `/api/v1/...`.
 */

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** The session cookie's name (the accounts domain sets it; kept here so the platform imports no domain). */
export const SESSION_COOKIE_NAME = "aiv_session"

/** application/json, application/<anything>+json, NDJSON (the observation import). Parameters ignored. */
export const isJsonContentType = (value: string | undefined): boolean => {
  if (value === undefined) return false
  const type = value.split(";")[0]!.trim().toLowerCase()
  return type === "application/json" || type === "application/x-ndjson" || type === "application/ndjson" ||
    (type.startsWith("application/") && type.endsWith("+json"))
}

const hasSessionCookie = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const cookie = request.headers["cookie"]
  return cookie !== undefined && cookie.includes(SESSION_COOKIE_NAME + "=")
}

const hasBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const length = request.headers["content-length"]
  if (length !== undefined) return length.trim() !== "0"
  if (request.headers["transfer-encoding"] !== undefined) return true
  // A web Request made in process may carry a body without either header.
  return request.source instanceof Request && request.source.body !== null
}

const foreign = (request: HttpServerRequest.HttpServerRequest, origin: string): boolean => {
  // The Host header; a web Request built in process may carry its host only in its URL.
  const host = request.headers["host"] ?? (request.source instanceof Request ? new URL(request.source.url).host : undefined)
  try {
    return origin === "null" || host === undefined || new URL(origin).host.toLowerCase() !== host.toLowerCase()
  } catch {
    return true
  }
}

export interface CsrfRefusal {
  readonly status: 403 | 415
  readonly error: string
}

/** Why the request is refused, or null when it may go on. */
export const csrfRefusal = (request: HttpServerRequest.HttpServerRequest): CsrfRefusal | null => {
  if (!STATE_CHANGING.has(request.method)) return null
  // The session cookie is honoured under /api/v1 only; elsewhere (the tag's collect endpoint, posted
  // from customers' pages, maybe same-site) a cookie the browser attaches grants nothing.
  if (!canonicalPath(request.url).startsWith("/api/v1/")) return null
  const cookie = hasSessionCookie(request)
  const origin = request.headers["origin"]
  if (origin !== undefined && origin !== "") {
    if (foreign(request, origin)) return { status: 403, error: "foreign origin" }
  } else if (cookie && request.headers["sec-fetch-site"] !== "same-origin") {
    return { status: 403, error: "missing Origin header: a cookie-authenticated change must come from this origin" }
  }
  if (hasBody(request) && !isJsonContentType(request.headers["content-type"])) {
    return { status: 415, error: "unsupported content type: send application/json" }
  }
  return null
}
