import { HttpApiError, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Option } from "effect"
import { csrfRefusal } from "./Csrf.js"
import { isUnstorableText } from "./SqlErrors.js"

/**
 * The outermost layer of every request: whatever a handler did not answer itself
 * leaves as a JSON `{"error": ...}` with the right status, never an HTML page or an
 * empty body. Typed API errors pass through untouched: HttpApi encodes them next.
 */

const jsonError = (status: number, error: string) => HttpServerResponse.unsafeJson({ error }, { status })

const MAX_MESSAGE = 200

/** "invalid range: must be one of 7d, 30d, 90d": the first offending parameter, named. */
export const decodeErrorMessage = (error: HttpApiError.HttpApiDecodeError): string => {
  const issue = error.issues[0]
  if (issue === undefined) return "invalid request"
  const name = issue.path.length > 0 ? issue.path.map(String).join(".") : "request"
  const message = issue.message.length > MAX_MESSAGE ? issue.message.slice(0, MAX_MESSAGE) + "\u2026" : issue.message
  return `invalid ${name}: ${message}`
}

const UNSTORABLE_TEXT = "invalid request: text with a NUL character or invalid UTF-8"

/**
 * The request target's escapes decode to text PostgreSQL can store: no NUL, and each run of
 * escapes valid UTF-8 (a lone `%` not followed by two hex digits is left to the parameter parser).
 */
const storableTarget = (url: string): boolean => {
  if (!url.includes("%")) return true
  if (/%00/.test(url)) return false
  for (const run of url.match(/(?:%[0-9A-Fa-f]{2})+/g) ?? []) {
    try {
      decodeURIComponent(run)
    } catch {
      return false
    }
  }
  return true
}

const API_ERROR_TAGS = new Set([
  "BadRequest",
  "Unauthorized",
  "PlanLimitReached",
  "Forbidden",
  "NotFound",
  "Conflict",
  "PayloadTooLarge",
  "QuotaExceeded",
  "NotImplemented",
  "ServiceUnavailable"
])
const isApiError = (failure: unknown) =>
  typeof failure === "object" && failure !== null && "_tag" in failure && API_ERROR_TAGS.has(String(failure._tag))

const isBodyDecodeDefect = (defect: unknown) =>
  HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"

const fromDefect = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const defect = Cause.squash(cause)
    if (isBodyDecodeDefect(defect)) return jsonError(400, "invalid JSON body")
    if (defect instanceof SqlError && isUnstorableText(defect.cause)) return jsonError(400, UNSTORABLE_TEXT)
    if (defect instanceof SqlError) {
      yield* Effect.logError("database unavailable", cause)
      return jsonError(503, "service unavailable")
    }
    yield* Effect.logError("unexpected defect", cause)
    return jsonError(500, "internal error")
  })

export const edgeMiddleware = (app: HttpApp.Default): HttpApp.Default => {
  // Typed as never-failing, the routed app does fail at run time: decode errors, unknown routes, API errors.
  const routed: HttpApp.Default<unknown> = app
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    {
      // A NUL character (or a malformed escape) in the path or query is bad input, whatever the parameter.
      if (!storableTarget(request.url)) return Effect.succeed(jsonError(400, UNSTORABLE_TEXT))
      // The CSRF guard of the cookie surface (src/platform/Csrf.ts).
      const refusal = csrfRefusal(request)
      return refusal === null ? routed : Effect.succeed(jsonError(refusal.status, refusal.error))
    }).pipe(
    Effect.catchIf(
      (error): error is HttpApiError.HttpApiDecodeError => error instanceof HttpApiError.HttpApiDecodeError,
      (error) => Effect.succeed(jsonError(400, decodeErrorMessage(error)))
    ),
    Effect.catchIf(
      (error): error is HttpServerError.RouteNotFound =>
        HttpServerError.isServerError(error) && error._tag === "RouteNotFound",
      () => Effect.succeed(jsonError(404, "not found"))
    ),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Option.match(Cause.failureOption(cause), {
          // A typed failure: HttpApi's own error encoder turns it into its status and body.
          // (The cause is handed on as is; HttpApi catches every cause, so nothing escapes typed as never.)
          onSome: (failure) => isApiError(failure) ? Effect.failCause(cause as Cause.Cause<never>) : fromDefect(Cause.die(failure)),
          onNone: () => fromDefect(cause)
        })
    )
  )
}
