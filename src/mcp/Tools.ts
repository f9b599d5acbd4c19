import { Tool, Toolkit } from "@effect/ai"
import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { OpenApi } from "@effect/platform"
import { Context, Effect, JSONSchema, Option, Schema, SchemaAST } from "effect"
import { PublicApi } from "../api.js"
import { InProcessApp, readJson } from "../web/InProcess.js"

/**
 * One read-only MCP tool per GET endpoint of the public API (19), derived from the endpoint
 * itself: its input schema is the endpoint's path and query Schemas (their decoded side, so
 * `limit` is an integer, not a numeric string), and a call runs the REST request in process
 * with the caller's own bearer key. Results and errors are the endpoint's JSON, unchanged.
 */

/** The Authorization header of the MCP request being served (set by the /mcp route after the key check). */
export class McpCaller extends Context.Tag("McpCaller")<McpCaller, { readonly authorization: string }>() {}

/** Tool names of the public read endpoints, by `group.endpoint`. */
const TOOL_NAMES: Record<string, string> = {
  "brands.list": "list_brands",
  "brands.get": "get_brand",
  "visibility.snapshots": "get_brand_snapshots",
  "visibility.mentions": "get_brand_mentions",
  "visibility.prompts": "get_brand_prompts",
  "visibility.portfolio": "get_portfolio",
  "visibility.model": "get_engine_performance",
  "visibility.topics": "get_topics",
  "agents.dashboard": "get_brand_agents",
  "agents.pages": "get_brand_agent_pages",
  "agents.searchPerformance": "get_brand_search_performance",
  "agents.attribution": "get_brand_attribution",
  "citations.citations": "get_citations",
  "citations.fanouts": "get_citation_fanouts",
  "industry.metrics": "get_industry_metrics",
  "industry.competitorCitations": "get_competitor_citations",
  "industry.competitorPrompts": "get_competitor_prompts",
  "industry.gap": "get_industry_gap",
  "industry.ranking": "get_industry_ranking"
}

const snake = (text: string) => text.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

type AnySchema = Schema.Schema<any, any, never>

const structFields = (schema: Option.Option<Schema.Schema.Any>): Schema.Struct.Fields =>
  Option.match(schema, {
    onNone: () => ({}),
    onSome: (s) => ("fields" in s ? (s as unknown as Schema.Struct<Schema.Struct.Fields>).fields : {})
  })

/** The decoded side of each field: what a tool caller sends as JSON. */
const typeSideFields = (fields: Schema.Struct.Fields): Schema.Struct.Fields => {
  const out: Record<string, Schema.Schema.Any | Schema.PropertySignature.Any> = {}
  for (const signature of SchemaAST.getPropertySignatures(Schema.typeSchema(Schema.Struct(fields)).ast)) {
    const type = Schema.make(signature.type) as AnySchema
    out[String(signature.name)] = signature.isOptional ? Schema.optional(type) : type
  }
  return out
}

/**
 * The tool's parameters as the REST endpoint would take them: the caller (an AI assistant) is shown
 * the endpoint's exact JSON Schema, but what it sends is not rejected here. The REST endpoint checks
 * it, so a bad value gets the API's own answer (`{"error":"invalid limit: ..."}`) as the tool error
 * rather than the toolkit's decode report.
 */
const lenientParameters = (fields: Schema.Struct.Fields) => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const shown = JSONSchema.fromAST(Schema.Struct(fields).ast, { definitions, topLevelReferenceStrategy: "skip" })
  const lenient: Record<string, Schema.PropertySignature.Any> = {}
  for (const name of Object.keys(fields)) lenient[name] = Schema.optional(Schema.Unknown)
  return Schema.Struct(lenient).annotations({
    jsonSchema: Object.keys(definitions).length === 0 ? shown : { ...shown, $defs: definitions }
  })
}

export interface ReadEndpointTool {
  readonly name: string
  readonly description: string
  readonly tool: Tool.Any
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
}

/** Every GET endpoint of PublicApi, as a tool. */
export const readEndpointTools: ReadonlyArray<ReadEndpointTool> = Object.values(
  PublicApi.groups as unknown as Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>
).flatMap((group) =>
  Object.values(group.endpoints as Record<string, HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>)
    .filter((endpoint) => endpoint.method === "GET")
    .map((endpoint) => {
      const name = TOOL_NAMES[`${group.identifier}.${endpoint.name}`] ?? snake(`${group.identifier}_${endpoint.name}`)
      const summary = Option.getOrElse(Context.getOption(endpoint.annotations, OpenApi.Summary), () => "")
      const detail = Option.getOrElse(Context.getOption(endpoint.annotations, OpenApi.Description), () => "")
      const description = [summary, detail, `Same JSON as GET ${endpoint.path} of the REST API.`]
        .filter((part) => part !== "")
        .join(" ")
      const tool = Tool.make(name, {
        description,
        success: Schema.Unknown,
        failure: Schema.Unknown
      }).setParameters(lenientParameters(typeSideFields({ ...structFields(endpoint.pathSchema), ...structFields(endpoint.urlParamsSchema) })))
        .annotate(Tool.Readonly, true).annotate(Tool.Destructive, false).annotate(Tool.Idempotent, true)
        .annotate(Tool.OpenWorld, false).annotate(Tool.Title, summary || name)
      return { name, description, tool: tool as unknown as Tool.Any, endpoint }
    })
)

export const PublicReadToolkit = Toolkit.make(...readEndpointTools.map((entry) => entry.tool))

/** A parameter as the text of a URL: numbers and booleans as JSON writes them, objects as JSON. */
const paramText = (value: unknown): string => (typeof value === "object" ? JSON.stringify(value) : String(value))

/**
 * The REST request of a tool call, parameters as sent (the endpoint decodes and checks them). A
 * missing path parameter is refused here, in the API's words: the route would not match.
 */
const requestUrl = (
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps,
  params: Record<string, unknown>
): Effect.Effect<string, { readonly error: string }> => {
  let missing: string | undefined
  const url = endpoint.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name]
    if (value === undefined || value === null || value === "") missing ??= name
    return encodeURIComponent(value === undefined || value === null ? "" : paramText(value))
  })
  if (missing !== undefined) return Effect.fail({ error: `invalid ${missing}: is missing` })
  const search = new URLSearchParams()
  for (const name of Object.keys(structFields(endpoint.urlParamsSchema))) {
    const value = params[name]
    if (value !== undefined && value !== null) search.set(name, paramText(value))
  }
  const text = search.toString()
  return Effect.succeed(text === "" ? url : `${url}?${text}`)
}

/** Handlers: run the REST request in process with the caller's key; a non-2xx answer is a tool error with its body. */
export const PublicReadToolkitLive = PublicReadToolkit.toLayer(
  Effect.gen(function*() {
    const inProcess = yield* InProcessApp
    const handlers: Record<string, (params: Record<string, unknown>) => Effect.Effect<unknown, unknown, any>> = {}
    for (const { endpoint, name } of readEndpointTools) {
      handlers[name] = (params) =>
        Effect.gen(function*() {
          const caller = yield* Effect.serviceOption(McpCaller)
          if (Option.isNone(caller)) return yield* Effect.fail({ error: "missing Authorization header" })
          const url = yield* requestUrl(endpoint, params)
          const response = yield* inProcess.run({ method: "GET", url, headers: { authorization: caller.value.authorization } })
          const { body, status } = yield* readJson(response)
          return status >= 200 && status < 300 ? body : yield* Effect.fail(body)
        })
    }
    return handlers as any
  })
)
