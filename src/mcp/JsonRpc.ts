import { McpSchema } from "@effect/ai"
import { HttpServerResponse } from "@effect/platform"

/**
 * What POST /mcp accepts before the RPC server sees it (docs/security.md, docs/web-and-mcp.md):
 * one JSON-RPC 2.0 message or a batch of at most MAX_BATCH, each a request or notification of a
 * method the server knows (or a response to the server). Anything else is answered here with a
 * standard JSON-RPC error object, `{"jsonrpc":"2.0","id":null,"error":{"code":...,"message":...}}`
 * (HTTP 400, as the Streamable HTTP transport asks for input the server cannot accept), so a
 * batch of thousands of calls never runs and every error has the protocol's shape.
 */

export const MAX_BATCH = 32

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603

const METHODS: ReadonlySet<string> = new Set(McpSchema.ClientRpcs.requests.keys())

type Id = string | number | null

export const jsonRpcError = (id: Id, code: number, message: string, status = 200) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", id, error: { code, message } }, { status })

export type Screened =
  | { readonly _tag: "Accepted"; /** Messages in the body: each counts against the key's rate limits. */ readonly messages: number }
  | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const idOf = (message: Record<string, unknown>): Id => {
  const id = message["id"]
  return typeof id === "string" || typeof id === "number" ? id : null
}

/** Why one message is refused (code and message), or null when the RPC server may have it. */
const screenOne = (message: unknown): { code: number; message: string } | null => {
  if (!isRecord(message) || message["jsonrpc"] !== "2.0") {
    return { code: INVALID_REQUEST, message: "Invalid Request: a JSON-RPC 2.0 object is expected" }
  }
  if ("method" in message) {
    const method = message["method"]
    if (typeof method !== "string") return { code: INVALID_REQUEST, message: "Invalid Request: method must be a string" }
    const id = message["id"]
    if (id !== undefined && typeof id !== "string" && typeof id !== "number") {
      return { code: INVALID_REQUEST, message: "Invalid Request: id must be a string or a number" }
    }
    if (!METHODS.has(method)) return { code: METHOD_NOT_FOUND, message: `Method not found: ${method.slice(0, 100)}` }
    const params = message["params"]
    if (params !== undefined && !isRecord(params)) return { code: INVALID_PARAMS, message: "Invalid params: params must be an object" }
    return null
  }
  // A response to a request of the server's (none is sent here, but the transport allows them).
  if ("result" in message || "error" in message) return null
  return { code: INVALID_REQUEST, message: "Invalid Request: neither a request, a notification nor a response" }
}

export const screen = (text: string): Screened => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { _tag: "Refused", response: jsonRpcError(null, PARSE_ERROR, "Parse error: the body is not JSON", 400) }
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed]
  if (messages.length === 0) {
    return { _tag: "Refused", response: jsonRpcError(null, INVALID_REQUEST, "Invalid Request: an empty batch", 400) }
  }
  if (messages.length > MAX_BATCH) {
    return {
      _tag: "Refused",
      response: jsonRpcError(null, INVALID_REQUEST, `Invalid Request: a batch holds at most ${MAX_BATCH} messages`, 400)
    }
  }
  for (const message of messages) {
    const refusal = screenOne(message)
    if (refusal === null) continue
    // A lone request gets its own id back; in a batch, the whole batch is refused.
    const id = !Array.isArray(parsed) && isRecord(message) ? idOf(message) : null
    const status = refusal.code === METHOD_NOT_FOUND && !Array.isArray(parsed) ? 200 : 400
    return { _tag: "Refused", response: jsonRpcError(id, refusal.code, refusal.message, status) }
  }
  return { _tag: "Accepted", messages: messages.length }
}

/**
 * The RPC server's error objects carry its own fields (`_tag`, a defect's `data`, code 1 for a
 * defect): rewritten to the standard `{code, message}` (a defect is -32603 Internal error).
 */
const standardError = (error: unknown): { code: number; message: string } => {
  if (!isRecord(error)) return { code: INTERNAL_ERROR, message: "Internal error" }
  const code = error["code"]
  const message = error["message"]
  if (typeof code === "number" && Number.isInteger(code) && code !== 1 && typeof message === "string") return { code, message }
  return { code: INTERNAL_ERROR, message: "Internal error" }
}

const standardMessage = (message: unknown): unknown =>
  isRecord(message) && "error" in message && message["jsonrpc"] === "2.0"
    ? { jsonrpc: "2.0", id: message["id"] ?? null, error: standardError(message["error"]) }
    : message

/** The RPC server's answer with every error object in the standard shape (other answers unchanged). */
export const standardErrors = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  const body = response.body
  if (body._tag !== "Uint8Array") return response
  const text = new TextDecoder().decode(body.body)
  if (!text.includes("\"error\"")) return response
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return response
  }
  const fixed = Array.isArray(parsed) ? parsed.map(standardMessage) : standardMessage(parsed)
  return HttpServerResponse.unsafeJson(fixed, { status: response.status, headers: response.headers })
}
