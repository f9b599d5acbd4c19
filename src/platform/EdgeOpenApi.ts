/**
 * What the edge (Middleware.ts) adds to every route's answers, written into an OpenAPI document
 * (an API's `OpenApi.Transform`): the rate-limit headers, and on the cookie surface the CSRF guard's
 * answers to a change. The statuses every route can answer (413, 429, 503) are declared as errors
 * of the API itself (src/api.ts), so the typed client knows them; this adds what HttpApi cannot
 * declare: response headers, and answers that only some methods get.
 */

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const HEADERS: Record<string, Json> = {
  "RateLimit-Limit": {
    description: "Requests the bucket nearest to empty (or the one that refused) holds when full",
    schema: { type: "integer", minimum: 0 }
  },
  "RateLimit-Remaining": {
    description: "Whole requests left in that bucket",
    schema: { type: "integer", minimum: 0 }
  },
  "RateLimit-Reset": {
    description:
      "Seconds until that bucket is full again; on a 429, seconds until it takes a request again, the same moment as Retry-After",
    schema: { type: "integer", minimum: 0 }
  },
  "Retry-After": {
    description: "Seconds to wait before retrying: on a 429, until the refusing bucket takes a request again; on a 503 while the server shuts down, 5",
    schema: { type: "integer", minimum: 0 }
  }
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })

const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"] as const

const ERROR_BODY = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" } },
  additionalProperties: false
}

const CHANGES = new Set(["post", "put", "patch", "delete"])

export interface EdgeSurface {
  /** Operations whose requests the rate limits check (their answers carry the RateLimit headers). */
  readonly limited: (operationId: string) => boolean
  /** The cookie surface: changes pass the CSRF guard (403 on a foreign or missing Origin, 415 on a body not JSON). */
  readonly csrf: boolean
}

const withHeaders = (response: Json, names: ReadonlyArray<string>): Json => ({
  ...response,
  headers: { ...(isRecord(response["headers"]) ? response["headers"] : {}), ...Object.fromEntries(names.map((name) => [name, ref(name)])) }
})

const operation = (op: Json, method: string, surface: EdgeSurface): Json => {
  const responses: Json = { ...(isRecord(op["responses"]) ? op["responses"] : {}) }
  if (surface.csrf && CHANGES.has(method)) {
    const forbidden = responses["403"]
    responses["403"] = {
      ...(isRecord(forbidden) ? forbidden : { content: { "application/json": { schema: ERROR_BODY } } }),
      description: `${isRecord(forbidden) && typeof forbidden["description"] === "string" ? `${forbidden["description"]}; or ` : ""}` +
        "the CSRF guard: an Origin naming another origin, or a session cookie without Origin (send Origin: this server's origin)"
    }
    if (responses["415"] === undefined) {
      responses["415"] = {
        description: "The body is not JSON: a cookie-authenticated change takes application/json only (the CSRF guard)",
        content: { "application/json": { schema: ERROR_BODY } }
      }
    }
  }
  const limited = typeof op["operationId"] === "string" && surface.limited(op["operationId"])
  for (const [status, response] of Object.entries(responses)) {
    if (!isRecord(response)) continue
    const names = [
      ...(limited ? RATE_LIMIT_HEADERS : []),
      ...((status === "429" && limited) || status === "503" ? ["Retry-After"] : [])
    ]
    if (names.length > 0) responses[status] = withHeaders(response, names)
  }
  return { ...op, responses }
}

/** The document with the edge's headers and answers added (an API's OpenApi.Transform). */
export const documentEdge = (surface: EdgeSurface) => (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths: Json = {}
  for (const [path, item] of Object.entries(isRecord(spec["paths"]) ? spec["paths"] : {})) {
    if (!isRecord(item)) continue
    paths[path] = Object.fromEntries(
      Object.entries(item).map(([method, op]) => [method, isRecord(op) ? operation(op, method, surface) : op])
    )
  }
  const components = isRecord(spec["components"]) ? spec["components"] : {}
  return { ...spec, paths, components: { ...components, headers: HEADERS } }
}
