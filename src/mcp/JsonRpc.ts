import { McpSchema } from "@effect/ai"
import { HttpServerResponse } from "@effect/platform"
import { RpcSerialization } from "@effect/rpc"
import { Either, Layer, ParseResult, Schema } from "effect"
import { isRecord } from "../platform/Guards.js"

/**
 * The JSON-RPC 2.0 framing of /mcp: @effect/rpc's `jsonRpc` serialization, made to answer as
 * JSON-RPC 2.0 and MCP clients expect (docs/web-and-mcp.md "Errors"):
 *
 * - protocol errors are standard error objects `{code, message}`: -32700 unparsable JSON, -32600 not a
 *   JSON-RPC 2.0 request, -32601 unknown method, -32602 parameters that do not match the method
 *   (checked here against the MCP schema before the request is dispatched), -32603 anything else;
 * - a response carries the request's own id (a string id stays a string; id 0 is an id);
 * - notifications and client responses get no answer (the transport then answers 202);
 * - `extendResult` adds what @effect/ai's McpServer does not send: `instructions` on initialize,
 *   `outputSchema` on each tool of tools/list.
 *
 * The serialization holds one parser per HTTP request, so the id table lives as long as the request.
 */

type JsonRpcId = string | number | null

interface JsonRpcErrorResponse {
  readonly jsonrpc: "2.0"
  readonly id: JsonRpcId
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown }
}

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603

/** Adds fields to the result of a method (by method name); the value is the encoded result. */
export type ResultExtender = (method: string, result: unknown) => unknown

const requestRpcs = McpSchema.ClientRequestRpcs.requests as ReadonlyMap<string, { readonly payloadSchema: Schema.Schema.Any }>
const notificationRpcs = McpSchema.ClientNotificationRpcs.requests as ReadonlyMap<string, unknown>

const isId = (value: unknown): value is string | number =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

const errorResponse = (id: JsonRpcId, code: number, message: string): JsonRpcErrorResponse => ({
  jsonrpc: "2.0",
  id,
  error: { code, message }
})

const MAX_MESSAGE = 300
const clip = (text: string) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}\u2026` : text)

/** The first issue of a parameter mismatch, named by its path: `params.name: is missing`. */
const paramsMessage = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "Invalid params"
  const path = ["params", ...issue.path.map(String)].join(".")
  return clip(`Invalid params: ${path}: ${issue.message}`)
}

const validators = new Map<string, (payload: unknown) => Either.Either<unknown, ParseResult.ParseError>>()
const validatorOf = (method: string, schema: Schema.Schema.Any) => {
  let validate = validators.get(method)
  if (validate === undefined) {
    // allow-cast: McpSchema's payload schemas need no service (Schema.Any only erases that).
    validate = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown, never>, { errors: "first" })
    validators.set(method, validate)
  }
  return validate
}

/** A failed Exit's error object, as the JSON-RPC `error` member. */
const failureError = (cause: unknown): { code: number; message: string } => {
  if (isRecord(cause) && cause["_tag"] === "Fail" && isRecord(cause["error"])) {
    const error = cause["error"]
    const code = typeof error["code"] === "number" && Number.isInteger(error["code"]) ? error["code"] : INTERNAL_ERROR
    const message = typeof error["message"] === "string" ? error["message"] : "Internal error"
    return { code, message: clip(message) }
  }
  // A defect or an interruption: nothing of it is the client's business.
  return { code: INTERNAL_ERROR, message: "Internal error" }
}

export const makeMcpJsonRpc = (extendResult: ResultExtender): RpcSerialization.RpcSerialization["Type"] => {
  const inner = RpcSerialization.jsonRpc()
  return RpcSerialization.RpcSerialization.of({
    contentType: inner.contentType,
    includesFraming: false,
    unsafeMake: () => {
      const parser = inner.unsafeMake()
      // Internal request id (what the RPC server sees) to the client's id and the method.
      const requests = new Map<string, { readonly id: string | number; readonly method: string }>()
      const refused: Array<JsonRpcErrorResponse> = []
      let nextId = 1
      let batch = false

      const accept = (message: unknown): ReadonlyArray<unknown> => {
        if (!isRecord(message)) {
          refused.push(errorResponse(null, INVALID_REQUEST, "Invalid Request: a JSON-RPC message is an object"))
          return []
        }
        const hasId = Object.hasOwn(message, "id")
        const rawId = message["id"]
        if (hasId && rawId !== null && !isId(rawId)) {
          refused.push(errorResponse(null, INVALID_REQUEST, "Invalid Request: id must be a string or a number"))
          return []
        }
        const method = message["method"]
        // MCP: a request's id is a string or an integer, never null; a notification has no id at all.
        if (hasId && rawId === null && method !== undefined) {
          refused.push(errorResponse(null, INVALID_REQUEST, "Invalid Request: id must not be null (a notification has no id member)"))
          return []
        }
        const id: string | number | null = isId(rawId) ? rawId : null
        // A response from the client (this server sends no requests): nothing to answer.
        if (method === undefined && (Object.hasOwn(message, "result") || Object.hasOwn(message, "error"))) return []
        if (message["jsonrpc"] !== "2.0" || typeof method !== "string") {
          refused.push(errorResponse(id, INVALID_REQUEST, "Invalid Request: expected {\"jsonrpc\":\"2.0\",\"method\":...}"))
          return []
        }
        const sent = message["params"]
        // tools/call without `arguments` (optional in MCP, required by the schema here): no arguments.
        const params = method === "tools/call" && isRecord(sent) && sent["arguments"] === undefined ? { ...sent, arguments: {} } : sent
        if (params !== undefined && !isRecord(params)) {
          if (id !== null) refused.push(errorResponse(id, INVALID_PARAMS, "Invalid params: params must be an object"))
          return []
        }
        if (id === null) {
          // A notification: known ones are dispatched, others (and the RPC library's own control
          // messages) are dropped, as JSON-RPC has a server do with notifications it does not know.
          if (!notificationRpcs.has(method)) return []
          return parser.decode(JSON.stringify({ jsonrpc: "2.0", method, params }))
        }
        const rpc = requestRpcs.get(method)
        if (rpc === undefined) {
          refused.push(errorResponse(id, METHOD_NOT_FOUND, clip(`Method not found: ${method}`)))
          return []
        }
        const checked = validatorOf(method, rpc.payloadSchema)(params)
        if (Either.isLeft(checked)) {
          refused.push(errorResponse(id, INVALID_PARAMS, paramsMessage(checked.left)))
          return []
        }
        const internal = nextId++
        requests.set(String(internal), { id, method })
        return parser.decode(JSON.stringify({ jsonrpc: "2.0", id: internal, method, params }))
      }

      return {
        decode: (bytes) => {
          const text = typeof bytes === "string" ? bytes : new TextDecoder().decode(bytes)
          if (nestedTooDeep(text)) {
            refused.push(tooDeepError)
            return []
          }
          let parsed: unknown
          try {
            parsed = JSON.parse(text)
          } catch {
            refused.push(errorResponse(null, PARSE_ERROR, "Parse error: the body is not JSON"))
            return []
          }
          if (Array.isArray(parsed)) {
            // An empty batch is answered with one error object, not an array (JSON-RPC 2.0, section 6).
            if (parsed.length === 0) {
              refused.push(errorResponse(null, INVALID_REQUEST, "Invalid Request: empty batch"))
              return []
            }
            batch = true
            return parsed.flatMap(accept)
          }
          return accept(parsed)
        },
        encode: (response) => {
          const messages = Array.isArray(response) ? response : [response]
          const out: Array<unknown> = []
          for (const message of messages) {
            if (!isRecord(message)) continue
            if (message["_tag"] === "Defect") {
              out.push(errorResponse(null, INTERNAL_ERROR, "Internal error"))
              continue
            }
            if (message["_tag"] !== "Exit") continue
            const request = requests.get(String(message["requestId"]))
            if (request === undefined) continue // a notification's completion
            requests.delete(String(message["requestId"]))
            const exit = message["exit"]
            if (isRecord(exit) && exit["_tag"] === "Success") {
              out.push({ jsonrpc: "2.0", id: request.id, result: extendResult(request.method, exit["value"]) })
            } else {
              out.push({ jsonrpc: "2.0", id: request.id, error: failureError(isRecord(exit) ? exit["cause"] : undefined) })
            }
          }
          out.push(...refused.splice(0))
          if (out.length === 0) return ""
          return JSON.stringify(batch ? out : out[0])
        }
      }
    }
  })
}

/** The serialization layer of the /mcp protocol. */
export const layerMcpJsonRpc = (extendResult: ResultExtender) =>
  Layer.succeed(RpcSerialization.RpcSerialization, makeMcpJsonRpc(extendResult))

/** The deepest nesting of arrays and objects a POST /mcp body may have (docs/security.md), a batch's own array included. */
export const MAX_DEPTH = 64

/**
 * Whether JSON text nests arrays and objects deeper than MAX_DEPTH, read in one pass before anything
 * parses or walks it: every later step (decoding, schema checks, re-encoding) would otherwise pay for
 * the depth, some of them recursively. Brackets inside strings do not count; text that is not JSON
 * is left to the parser.
 */
export const nestedTooDeep = (text: string): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: the next character is escaped
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > MAX_DEPTH) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

const tooDeepError = errorResponse(null, INVALID_REQUEST, `Invalid Request: JSON nested deeper than ${MAX_DEPTH} levels`)

/** A body nested deeper than MAX_DEPTH, refused before dispatch: HTTP 400 with a JSON-RPC error. */
export const nestedTooDeepResponse = () => HttpServerResponse.unsafeJson(tooDeepError, { status: 400 })

/** The most JSON-RPC messages one POST /mcp may carry (docs/security.md): a larger batch never runs. */
export const MAX_BATCH = 32

/**
 * How many messages a body holds, read before the RPC server sees it so that a batch is bounded and
 * every call in it is counted against the key's limits; a body that is not JSON counts as one (the
 * serialization answers it with -32700).
 */
export const messageCount = (text: string): number => {
  try {
    const parsed: unknown = JSON.parse(text)
    return Array.isArray(parsed) ? parsed.length : 1
  } catch {
    return 1
  }
}

/** A protocol error answered before dispatch: HTTP 400 with a standard JSON-RPC error object. */
export const batchTooLarge = () =>
  HttpServerResponse.unsafeJson(
    errorResponse(null, INVALID_REQUEST, `Invalid Request: a batch holds at most ${MAX_BATCH} messages`),
    { status: 400 }
  )

const isUnattributedError = (message: unknown): boolean =>
  isRecord(message) && message["id"] === null && isRecord(message["error"])

/**
 * Input the server could not accept at all (not JSON, not a JSON-RPC message, an empty batch: every answer an
 * error without an id) leaves with HTTP 400, as the Streamable HTTP transport asks; anything else unchanged.
 */
export const statusOfUnaccepted = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  const body = response.body
  if (body._tag !== "Uint8Array" || response.status !== 200) return response
  const text = new TextDecoder().decode(body.body)
  if (!text.includes("\"id\":null")) return response
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return response
  }
  const unaccepted = Array.isArray(parsed) ? parsed.length > 0 && parsed.every(isUnattributedError) : isUnattributedError(parsed)
  return unaccepted ? HttpServerResponse.unsafeJson(parsed, { status: 400, headers: response.headers }) : response
}
