import { HttpApiError, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Option, type SchemaAST } from "effect"
import { csrfRefusal } from "./Csrf.js"
import { isStatementTimeout, isUnstorableText } from "./SqlErrors.js"

/**
 * The innermost part of the edge (src/platform/Middleware.ts wraps it): whatever a handler did
 * not answer itself leaves as a JSON `{"error": ...}` with the right status, never an HTML page
 * or an empty body. Typed API errors pass on untouched: HttpApi encodes them next, with the
 * status their definition carries. Which errors those are is read from the API definition
 * itself (apiErrorTags), so an error class added to an endpoint is never mistaken for a defect.
 */

export const jsonError = (status: number, error: string) => HttpServerResponse.unsafeJson({ error }, { status })

const MAX_MESSAGE = 200

/** "invalid range: must be one of 7d, 30d, 90d": the first offending parameter, named. */
export const decodeErrorMessage = (error: HttpApiError.HttpApiDecodeError): string => {
  const issue = error.issues[0]
  if (issue === undefined) return "invalid request"
  const name = issue.path.length > 0 ? issue.path.map(String).join(".") : "request"
  const message = issue.message.length > MAX_MESSAGE ? issue.message.slice(0, MAX_MESSAGE) + "\u2026" : issue.message
  return `invalid ${name}: ${message}`
}

/** The 503 of a statement the database cancelled at the statement timeout. */
export const TOOK_TOO_LONG = "the query took too long and was cancelled: try again later, or ask for less (a shorter range, fewer items)"

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

// ---------------------------------------------------------------------------
// The API's errors, from its definition
// ---------------------------------------------------------------------------

interface ErrorsOf {
  readonly errorSchema: { readonly ast: SchemaAST.AST }
  readonly middlewares: ReadonlySet<{ readonly failure: { readonly ast: SchemaAST.AST } }>
}

/** The shape of an HttpApi this reads: its groups, their endpoints, and the error schemas of each level. */
export interface ApiErrorsSource extends ErrorsOf {
  readonly groups: Readonly<Record<string, ErrorsOf & { readonly endpoints: Readonly<Record<string, ErrorsOf>> }>>
}

/** The `_tag` literals of every tagged struct or class a schema can produce. */
const collectTags = (ast: SchemaAST.AST, into: Set<string>): void => {
  switch (ast._tag) {
    case "Union":
      for (const member of ast.types) collectTags(member, into)
      return
    case "Transformation":
      collectTags(ast.from, into)
      collectTags(ast.to, into)
      return
    case "Refinement":
      collectTags(ast.from, into)
      return
    case "Declaration":
      for (const parameter of ast.typeParameters) collectTags(parameter, into)
      return
    case "TypeLiteral":
      for (const property of ast.propertySignatures) {
        if (property.name === "_tag" && property.type._tag === "Literal" && typeof property.type.literal === "string") {
          into.add(property.type.literal)
        }
      }
      return
    default:
      return
  }
}

/** Every error tag an API declares: on itself, its groups, their endpoints, and their middlewares. */
export const apiErrorTags = (api: ApiErrorsSource): ReadonlySet<string> => {
  const tags = new Set<string>()
  const add = (level: ErrorsOf) => {
    collectTags(level.errorSchema.ast, tags)
    for (const middleware of level.middlewares) collectTags(middleware.failure.ast, tags)
  }
  add(api)
  for (const group of Object.values(api.groups)) {
    add(group)
    for (const endpoint of Object.values(group.endpoints)) add(endpoint)
  }
  return tags
}

// ---------------------------------------------------------------------------
// Failures to answers
// ---------------------------------------------------------------------------

const isBodyDecodeDefect = (defect: unknown) =>
  HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"

const fromDefect = (cause: Cause.Cause<unknown>, defect: unknown) => {
  if (isBodyDecodeDefect(defect)) return Effect.succeed(jsonError(400, "invalid JSON body"))
  if (defect instanceof SqlError && isUnstorableText(defect.cause)) return Effect.succeed(jsonError(400, UNSTORABLE_TEXT))
  if (defect instanceof SqlError && isStatementTimeout(defect.cause)) {
    return Effect.as(Effect.logWarning("statement timeout", cause), jsonError(503, TOOK_TOO_LONG))
  }
  if (defect instanceof SqlError) {
    return Effect.as(Effect.logError("database unavailable", cause), jsonError(503, "service unavailable"))
  }
  return Effect.as(Effect.logError("unexpected defect", cause), jsonError(500, "internal error"))
}

/**
 * An interruption handed on as it came (the server's own handling of an interrupted request, at
 * shutdown too, depends on it). It carries no failure, so it is rebuilt as a cause of none.
 */
const interruptionOf = (cause: Cause.Cause<unknown>): Cause.Cause<never> =>
  Array.from(Cause.interruptors(cause), (id) => Cause.interrupt(id)).reduce<Cause.Cause<never>>(Cause.sequential, Cause.empty)

const hasTag = (failure: unknown, tags: ReadonlySet<string>) =>
  typeof failure === "object" && failure !== null && "_tag" in failure && typeof failure._tag === "string" &&
  tags.has(failure._tag)

/**
 * The answer to a failed request. A declared API error is handed on as a defect carrying the same
 * value: HttpApi's encoder squashes the cause either way and answers with the error's own status.
 */
const answerFailure = (apiErrors: ReadonlySet<string>) =>
(cause: Cause.Cause<unknown>): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(interruptionOf(cause))
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return fromDefect(cause, Cause.squash(cause))
  const error = failure.value
  if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(jsonError(400, decodeErrorMessage(error)))
  if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") return Effect.succeed(jsonError(404, "not found"))
  return hasTag(error, apiErrors) ? Effect.die(error) : fromDefect(cause, error)
}

/**
 * The routed app behind the request-target check and the CSRF guard (src/platform/Csrf.ts), every
 * failure answered. Built once per app: a request runs it, it allocates nothing of its own.
 */
export const guardedApp = (app: HttpApp.Default, apiErrors: ReadonlySet<string>): HttpApp.Default => {
  // Typed as never-failing, the routed app does fail at run time: decode errors, unknown routes, API errors.
  const routed: HttpApp.Default<unknown> = app
  return Effect.catchAllCause(
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // A NUL character (or a malformed escape) in the path or query is bad input, whatever the parameter.
      if (!storableTarget(request.url)) return Effect.succeed(jsonError(400, UNSTORABLE_TEXT))
      const refusal = csrfRefusal(request)
      return refusal === null ? routed : Effect.succeed(jsonError(refusal.status, refusal.error))
    }),
    answerFailure(apiErrors)
  )
}
