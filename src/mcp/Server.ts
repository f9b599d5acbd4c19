import { McpServer } from "@effect/ai"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { RpcServer } from "@effect/rpc"
import { Effect, Layer, Option } from "effect"
import { ApiKeys } from "../accounts/ApiKeys.js"
import { API_VERSION } from "../api.js"
import { clientIp } from "../platform/ClientIp.js"
import { AppConfig } from "../platform/Config.js"
import { bearerToken, keyBucket } from "../platform/Bearer.js"
import { noteAccount } from "../platform/RequestMeta.js"
import { RateLimiter, rateLimitedResponse } from "../platform/RateLimiter.js"
import { InProcessAppLive } from "../web/InProcess.js"
import { INSTRUCTIONS, PromptsLive } from "./Guide.js"
import { batchTooLarge, layerMcpJsonRpc, MAX_BATCH, messageCount, nestedTooDeep, nestedTooDeepResponse, statusOfUnaccepted } from "./JsonRpc.js"
import { requestOrigin } from "../platform/RequestOrigin.js"
import { McpCaller, ReadToolsLive, toolOutputSchemas } from "./Tools.js"

/**
 * The MCP server at /mcp (Streamable HTTP, JSON responses; @effect/ai McpServer on the same
 * router as the APIs). MCP has no authentication of its own here: every POST first passes the
 * bearer check of the public API (ApiKeys.authenticate: the same four 401 bodies, a revoked
 * key refused on its next request), and the tools then call the REST endpoints with that key.
 */

export const MCP_PATH = "/mcp"

const unauthorized = (error: string) => HttpServerResponse.unsafeJson({ error }, { status: 401 })
const forbidden = (error: string) => HttpServerResponse.unsafeJson({ error }, { status: 403 })
const methodNotAllowed = HttpServerResponse.unsafeJson(
  { error: "method not allowed: POST JSON-RPC messages to /mcp" },
  { status: 405, headers: { allow: "POST" } }
)

const isEmptyBody = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Empty" || (response.body._tag === "Uint8Array" && response.body.body.length === 0)

/**
 * What @effect/ai's McpServer leaves out of its results: the server's instructions on initialize, each
 * tool's outputSchema in tools/list.
 */
const extendResult = (method: string, result: unknown): unknown => {
  if (typeof result !== "object" || result === null) return result
  if (method === "initialize") return { ...result, instructions: INSTRUCTIONS }
  if (method === "tools/list" && "tools" in result && Array.isArray(result.tools)) {
    return {
      ...result,
      tools: result.tools.map((tool: { readonly name?: unknown }) => {
        const outputSchema = typeof tool.name === "string" ? toolOutputSchemas.get(tool.name) : undefined
        return outputSchema === undefined ? tool : { ...tool, outputSchema }
      })
    }
  }
  return result
}

/** The RPC protocol over HTTP, mounted behind the key check. */
const McpProtocolLive = Layer.effect(
  RpcServer.Protocol,
  Effect.gen(function*() {
    const router = yield* HttpApiBuilder.Router
    const keys = yield* ApiKeys
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const { httpApp, protocol } = yield* RpcServer.makeProtocolWithHttpApp
    const guarded = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const authorization = request.headers["authorization"]
      const account = yield* Effect.either(keys.authenticate(authorization))
      if (account._tag === "Left") {
        // 403 for a key its plan's cap leaves out after a downgrade, as on the public API.
        return account.left._tag === "Forbidden" ? forbidden(account.left.error) : unauthorized(account.left.error)
      }
      // The request log line names the account (src/platform/Middleware.ts).
      yield* noteAccount(account.right.accountId)
      // At most MAX_BATCH messages; the serialization answers malformed ones with JSON-RPC errors.
      const text = yield* Effect.orElseSucceed(request.text, () => "")
      // Bounded before anything parses it: depth costs every later step, some of them recursively.
      if (nestedTooDeep(text)) return nestedTooDeepResponse()
      const messages = messageCount(text)
      if (messages > MAX_BATCH) return batchTooLarge()
      if (messages > 1) {
        // The edge took one token for the request: a batch takes one more per further message.
        const cost = messages - 1
        const token = bearerToken(authorization) ?? ""
        const decision = yield* limiter.check([
          { bucket: "ip:" + (clientIp(request, config.trustProxy) ?? "unknown"), rule: limiter.rules.apiIp, cost },
          { bucket: keyBucket(token), rule: limiter.rules.apiKey, cost }
        ])
        if (Option.isSome(decision) && !decision.value.allowed) return rateLimitedResponse(decision.value)
      }
      // The tool handlers run in fibers that inherit this request's context: they read the key here.
      const response = yield* Effect.provideService(httpApp, McpCaller, {
        authorization: authorization!,
        origin: requestOrigin(request, config.trustProxy)
      })
      // Only notifications or responses arrived: nothing to answer, as the transport has it.
      return isEmptyBody(response) ? HttpServerResponse.empty({ status: 202 }) : statusOfUnaccepted(response)
    })
    yield* router.post(MCP_PATH, guarded)
    // No server-initiated stream and no sessions: GET and DELETE are refused, as the transport allows.
    yield* router.get(MCP_PATH, Effect.succeed(methodNotAllowed))
    yield* router.del(MCP_PATH, Effect.succeed(methodNotAllowed))
    return protocol
  })
).pipe(Layer.provide([HttpApiBuilder.Router.Live, layerMcpJsonRpc(extendResult)]))

export const McpLive = Layer.mergeAll(ReadToolsLive, PromptsLive).pipe(
  Layer.provide(McpServer.layer({ name: "ai-visibility", version: API_VERSION })),
  Layer.provide(McpProtocolLive),
  Layer.provide(InProcessAppLive)
)
