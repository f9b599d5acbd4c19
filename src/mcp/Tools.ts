import { McpSchema, McpServer } from "@effect/ai"
import type { HttpApiEndpoint } from "@effect/platform"
import { HttpApi, OpenApi } from "@effect/platform"
import { Context, Effect, Either, JSONSchema, Layer, Option, ParseResult, Schema, SchemaAST } from "effect"
import { PublicApi } from "../api.js"
import { closedSetOf, McpTool } from "../platform/McpTool.js"
import { InProcessApp, readJson } from "../web/InProcess.js"
import { isRecord } from "../platform/Guards.js"

/**
 * One read-only MCP tool per GET endpoint of the public API, derived from the endpoint itself
 * (docs/web-and-mcp.md "MCP server"):
 *
 * - description: the endpoint's OpenAPI summary and description (written beside the endpoint, for people
 *   and assistants alike), each `GET /path` in it named by its tool, plus how this tool pages;
 * - input: the endpoint's path and query Schemas on their decoded side (`limit` an integer), with every
 *   closed set an enum, free text bounded, no other property accepted; checked before any request;
 * - output: the JSON Schema of the endpoint's success Schema; the result is the endpoint's JSON as
 *   `structuredContent` and as text. Lists the endpoint returns whole are paged here (`limit`/`offset`,
 *   a `page` object added), so an assistant reads a few rows at a time.
 *
 * A call runs the REST request in process with the caller's own bearer key; a non-2xx answer is an
 * `isError` result whose text is the endpoint's JSON body (no structured content: it is not the output).
 */

/** The Authorization header of the MCP request being served (set by the /mcp route after the key check). */
/** Who calls a tool: the key, and the origin the client reached the server at (URLs in answers point back at it). */
export class McpCaller extends Context.Tag("McpCaller")<McpCaller, { readonly authorization: string; readonly origin: string }>() {}

const MAX_PAGE = 500
const MAX_OFFSET = 100_000

/**
 * A default page (no `limit` given) holds fewer rows when the whole answer, structured content and its
 * text twin, would pass this many bytes: an assistant's context pays for every byte, and a month of
 * snapshots with their per-engine and per-competitor objects came to 70 KB. A `limit` the caller gives
 * is honoured whatever the size.
 */
export const DEFAULT_ANSWER_BYTES = 60_000

/** Longest free-text argument (bot, vendor, folder, q, topic, slug...). */
const MAX_TEXT = 200

const snake = (text: string) => text.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** A parameter's Schema, of any type and needing no service (what a tool decodes its arguments with). */
type AnySchema = Schema.Schema.AnyNoContext

/** The properties of an endpoint's path or query Schema, on their decoded side (none without a Schema). */
const typeSideSignatures = (schema: Option.Option<Schema.Schema.Any>): ReadonlyArray<SchemaAST.PropertySignature> =>
  Option.match(schema, {
    onNone: () => [],
    onSome: (s) => SchemaAST.getPropertySignatures(SchemaAST.typeAST(s.ast))
  })

interface Parameter {
  readonly name: string
  readonly schema: AnySchema
  readonly optional: boolean
}

/** An optional property's type without the `| undefined` Schema adds: JSON has no undefined. */
const withoutUndefined = (ast: SchemaAST.AST): SchemaAST.AST => {
  if (!SchemaAST.isUnion(ast)) return ast
  const members = ast.types.filter((member) => !SchemaAST.isUndefinedKeyword(member))
  return members.length === 1 ? members[0]! : SchemaAST.Union.make(members, ast.annotations)
}

/** The decoded side of each property: what a tool caller sends as JSON. */
const typeSideParameters = (signatures: ReadonlyArray<SchemaAST.PropertySignature>): Array<Parameter> =>
  signatures.map((signature) => ({
    name: String(signature.name),
    schema: Schema.make(signature.isOptional ? withoutUndefined(signature.type) : signature.type),
    optional: signature.isOptional
  }))

const descriptionOf = (schema: AnySchema): string | undefined =>
  Option.getOrUndefined(SchemaAST.getDescriptionAnnotation(schema.ast))

// allow-cast: a JSON Schema document is a JSON object; the tools read and extend its fields by name.
const jsonSchemaOf = (schema: AnySchema): JSONSchema.JsonSchema7 & Record<string, unknown> =>
  JSONSchema.fromAST(schema.ast, { definitions: {}, topLevelReferenceStrategy: "skip" }) as JSONSchema.JsonSchema7 & Record<string, unknown>

const pageInteger = (min: number, max: number, fallback: number, description: string): AnySchema =>
  Schema.Int.pipe(Schema.between(min, max)).annotations({
    description,
    message: () => ({ message: `must be an integer between ${min} and ${max}`, override: true }),
    jsonSchema: { type: "integer", minimum: min, maximum: max, default: fallback, description }
  })

/** One parameter as the tool takes it: closed sets as enums, free text bounded. */
const toolParameter = (tool: string, parameter: Parameter): Parameter => {
  const description = descriptionOf(parameter.schema)
  const annotate = (schema: AnySchema, message: string) =>
    schema.annotations({ ...(description === undefined ? {} : { description }), message: () => ({ message, override: true }) })
  const closed = closedSetOf(parameter.schema.ast)
  const shown = jsonSchemaOf(parameter.schema)
  if (closed !== undefined && shown["enum"] === undefined) {
    return { ...parameter, schema: annotate(Schema.Literal(...closed), `must be one of ${closed.join(", ")}`) }
  }
  if (parameter.name === "limit" && TOOL_DEFAULT_LIMITS.get(tool) !== undefined) {
    const fallback = TOOL_DEFAULT_LIMITS.get(tool)!
    return { ...parameter, schema: pageInteger(1, MAX_PAGE, fallback, `Page size, 1..${MAX_PAGE}, default ${fallback}`) }
  }
  if (parameter.name === "offset" && shown["maximum"] === undefined) {
    return { ...parameter, schema: pageInteger(0, MAX_OFFSET, 0, `Rows to skip, 0..${MAX_OFFSET}, default 0`) }
  }
  if (shown["type"] === "string" && shown["enum"] === undefined && shown["maxLength"] === undefined) {
    const bounded = parameter.schema.pipe(Schema.maxLength(MAX_TEXT, { message: () => `must be at most ${MAX_TEXT} characters` }))
    return { ...parameter, schema: description === undefined ? bounded : bounded.annotations({ description }) }
  }
  return parameter
}

const pagingParameters = (limit: number): Array<Parameter> => [
  {
    name: "limit",
    schema: pageInteger(1, MAX_PAGE, limit, `Rows of the list to return, 1..${MAX_PAGE}, default ${limit}`),
    optional: true
  },
  {
    name: "offset",
    schema: pageInteger(0, MAX_OFFSET, 0, "Rows of the list to skip, default 0; the next page starts at page.next_offset"),
    optional: true
  }
]

type ArgumentFields = Record<string, AnySchema | Schema.optional<AnySchema>>

const structOf = (parameters: ReadonlyArray<Parameter>): Schema.Struct<ArgumentFields> => {
  const fields: ArgumentFields = {}
  for (const { name, optional, schema } of parameters) fields[name] = optional ? Schema.optional(schema) : schema
  return Schema.Struct(fields)
}

/** JSON Schema of a Schema, definitions inlined under `$defs` (the MCP clients resolve `#/$defs/...`). */
const objectJsonSchema = (ast: SchemaAST.AST): Record<string, unknown> => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const schema: Record<string, unknown> = { ...JSONSchema.fromAST(ast, { definitions, topLevelReferenceStrategy: "skip" }) }
  const { $schema: _ignored, ...rest } = schema
  return Object.keys(definitions).length === 0 ? rest : { ...rest, $defs: definitions }
}

const PAGE_OUTPUT = {
  type: "object",
  description: "Which rows of the list this result holds",
  required: ["offset", "limit", "returned", "total", "next_offset"],
  properties: {
    offset: { type: "integer", description: "Rows skipped" },
    limit: { type: "integer", description: "Page size asked for" },
    returned: { type: "integer", description: "Rows in this result" },
    total: { type: "integer", description: "Rows of the whole list" },
    next_offset: {
      anyOf: [{ type: "integer" }, { type: "null" }],
      description: "offset of the next page; null on the last page"
    }
  },
  additionalProperties: false
} as const

const withPage = (output: Record<string, unknown>): Record<string, unknown> => ({
  ...output,
  properties: { ...(isRecord(output["properties"]) ? output["properties"] : {}), page: PAGE_OUTPUT },
  required: [...(Array.isArray(output["required"]) ? output["required"] : []), "page"]
})

export interface ReadEndpointTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  /** JSON Schema of the arguments (an object, no other property allowed). */
  readonly inputSchema: Record<string, unknown>
  /** JSON Schema of `structuredContent`. */
  readonly outputSchema: Record<string, unknown>
  readonly paging: { readonly field: string; readonly limit: number } | undefined
  /** The checked arguments, or the REST-style error text naming the first bad one. */
  readonly decode: (args: unknown) => Either.Either<Record<string, unknown>, string>
}

const endpoints: ReadonlyArray<{ readonly group: string; readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps }> = (() => {
  const found: Array<{ readonly group: string; readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps }> = []
  HttpApi.reflect(PublicApi, {
    predicate: ({ endpoint }) => endpoint.method === "GET",
    onGroup: () => {},
    // The group's own record holds the endpoint under the type every endpoint shares (reflect's is narrower).
    onEndpoint: ({ endpoint, group }) => {
      const typed = group.endpoints[endpoint.name]
      if (typed !== undefined) found.push({ group: group.identifier, endpoint: typed })
    }
  })
  return found
})()

/** The endpoint's McpTool annotation (its tool name, paging), written beside the endpoint in its domain's Api.ts. */
const toolOptionsOf = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) => Context.getOption(endpoint.annotations, McpTool)

const toolNameOf = (group: string, endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) =>
  Option.match(toolOptionsOf(endpoint), { onNone: () => snake(`${group}_${endpoint.name}`), onSome: (tool) => tool.name })

/** The tool's own default `limit`, by tool name, for the endpoints that page themselves. */
const TOOL_DEFAULT_LIMITS: ReadonlyMap<string, number> = new Map(
  endpoints.flatMap(({ endpoint, group }) =>
    Option.match(toolOptionsOf(endpoint), {
      onNone: () => [],
      onSome: (tool) => (tool.defaultLimit === undefined ? [] : [[toolNameOf(group, endpoint), tool.defaultLimit] as const])
    })
  )
)

const API_PREFIX = "/api/public/v1"
const relativePath = (path: string) => (path.startsWith(API_PREFIX) ? path.slice(API_PREFIX.length) : path)
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `GET /brands/:slug/snapshots` in an endpoint's description, as the tool an assistant calls: get_brand_snapshots. */
const TOOL_REFERENCES: ReadonlyArray<readonly [RegExp, string]> = endpoints
  .map(({ endpoint, group }) => [relativePath(endpoint.path), toolNameOf(group, endpoint)] as const)
  .sort((a, b) => b[0].length - a[0].length)
  .map(([path, name]) => [new RegExp(`GET ${escapeRegExp(path)}(?![\\w/:-])`, "g"), name] as const)

export const toolReferences = (text: string): string =>
  TOOL_REFERENCES.reduce((out, [pattern, name]) => out.replace(pattern, name), text)

const pagingNote = (name: string, paging: ReadEndpointTool["paging"]): string => {
  if (paging !== undefined) {
    return ` This tool returns ${paging.field} one page at a time: limit (rows, 1..${MAX_PAGE}, default ${paging.limit}) and ` +
      "offset (default 0); page.total is the length of the whole list and page.next_offset the offset of the next page " +
      `(null on the last). Without limit a page holds fewer rows when the answer would pass ${DEFAULT_ANSWER_BYTES / 1000} KB. ` +
      "Other list fields are whole."
  }
  const limit = TOOL_DEFAULT_LIMITS.get(name)
  return limit === undefined ? "" : ` This tool's default page size is ${limit} (the REST default is larger).`
}

/**
 * The arguments of a call, checked before any request: an object, only the tool's parameters (an empty
 * Struct would take any object), each valid. A refusal is in the REST API's words:
 * `invalid limit: must be an integer between 1 and 500`.
 */
const checkArguments = (tool: string, names: ReadonlyArray<string>, input: Schema.Struct<ArgumentFields>) => {
  const decode = Schema.decodeUnknownEither(input, {
    onExcessProperty: "error",
    errors: "first"
  })
  const known = new Set(names)
  const takes = names.length === 0 ? "no parameters" : names.join(", ")
  return (args: unknown): Either.Either<Record<string, unknown>, string> => {
    if (typeof args !== "object" || args === null || Array.isArray(args)) return Either.left("invalid arguments: must be an object")
    const unknownName = Object.keys(args).find((name) => !known.has(name))
    if (unknownName !== undefined) return Either.left(`invalid ${unknownName.slice(0, 100)}: unknown parameter; ${tool} takes ${takes}`)
    return Either.mapLeft(decode(args), (error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      if (issue === undefined) return "invalid arguments"
      const name = issue.path.length > 0 ? issue.path.map(String).join(".") : "arguments"
      if (issue._tag === "Missing") return `invalid ${name}: is missing`
      return `invalid ${name}: ${issue.message.length > 200 ? `${issue.message.slice(0, 200)}\u2026` : issue.message}`
    })
  }
}

/** Every GET endpoint of PublicApi, as a tool. */
export const readEndpointTools: ReadonlyArray<ReadEndpointTool> = endpoints.map(({ endpoint, group }) => {
  const name = toolNameOf(group, endpoint)
  const summary = Option.getOrElse(Context.getOption(endpoint.annotations, OpenApi.Summary), () => "")
  const detail = Option.getOrElse(Context.getOption(endpoint.annotations, OpenApi.Description), () => "")
  const paging = Option.getOrUndefined(toolOptionsOf(endpoint))?.page
  const parameters = [
    ...typeSideParameters([...typeSideSignatures(endpoint.pathSchema), ...typeSideSignatures(endpoint.urlParamsSchema)])
      .map((parameter) => toolParameter(name, parameter)),
    ...(paging === undefined ? [] : pagingParameters(paging.limit))
  ]
  const input = structOf(parameters)
  const output = objectJsonSchema(endpoint.successSchema.ast)
  const description = [
    summary === "" ? "" : `${summary}.`,
    toolReferences(detail),
    pagingNote(name, paging).trim(),
    "Read-only; the result is the REST answer's JSON (structuredContent, typed by outputSchema); " +
    `an error is an isError result holding the REST error body, e.g. {"error":"brand not found"}.`
  ].filter((part) => part !== "").join(" ")
  return {
    name,
    title: summary || name,
    description,
    endpoint,
    inputSchema: parameters.length === 0
      ? { type: "object", properties: {}, required: [], additionalProperties: false }
      : { ...objectJsonSchema(input.ast), additionalProperties: false },
    outputSchema: paging === undefined ? output : withPage(output),
    paging,
    decode: checkArguments(name, parameters.map((parameter) => parameter.name), input)
  }
})

/** outputSchema of each tool, by name (added to tools/list: @effect/ai's Tool has no such field). */
export const toolOutputSchemas: ReadonlyMap<string, Record<string, unknown>> = new Map(
  readEndpointTools.map((tool) => [tool.name, tool.outputSchema])
)

/** A parameter as the text of a URL: numbers and booleans as JSON writes them. */
const paramText = (value: unknown): string => (typeof value === "object" ? JSON.stringify(value) : String(value))

/** The REST request of a tool call, from checked arguments (the paging of the tool itself left out). */
const requestUrl = (tool: ReadEndpointTool, params: Record<string, unknown>): string => {
  const url = tool.endpoint.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(paramText(params[name])))
  const search = new URLSearchParams()
  for (const name of typeSideSignatures(tool.endpoint.urlParamsSchema).map((signature) => String(signature.name))) {
    const value = params[name] ?? (name === "limit" ? TOOL_DEFAULT_LIMITS.get(tool.name) : undefined)
    if (value !== undefined && value !== null) search.set(name, paramText(value))
  }
  const text = search.toString()
  return text === "" ? url : `${url}?${text}`
}

/** One page of the tool's list, with the `page` object. */
const pageOf = (
  paging: NonNullable<ReadEndpointTool["paging"]>,
  body: unknown,
  params: Record<string, unknown>
): unknown => {
  const rows = isRecord(body) ? body[paging.field] : undefined
  if (!isRecord(body) || !Array.isArray(rows)) return body
  const record = body
  const given = params["limit"]
  const asked = typeof given === "number"
  const limit = asked ? given : paging.limit
  const offset = typeof params["offset"] === "number" ? params["offset"] : 0
  const pageOfRows = (page: ReadonlyArray<unknown>) => ({
    ...record,
    [paging.field]: page,
    // `count` says how many rows the answer holds: this page's.
    ...(typeof record["count"] === "number" ? { count: page.length } : {}),
    page: {
      offset,
      limit,
      returned: page.length,
      total: rows.length,
      next_offset: offset + page.length < rows.length ? offset + page.length : null
    }
  })
  let page = rows.slice(offset, offset + limit)
  let result = pageOfRows(page)
  if (asked) return result
  // A default page within DEFAULT_ANSWER_BYTES: fewer rows, in proportion, until it fits (one row at least).
  for (let size = answerBytes(result); size > DEFAULT_ANSWER_BYTES && page.length > 1; size = answerBytes(result)) {
    page = page.slice(0, Math.max(1, Math.min(page.length - 1, Math.floor(page.length * DEFAULT_ANSWER_BYTES / size))))
    result = pageOfRows(page)
  }
  return result
}

const textResult = (value: unknown) => [{ type: "text" as const, text: JSON.stringify(value) }]

/** The bytes of a tool's result as it goes out: the structured content and its text twin. */
const answerBytes = (value: unknown) => Buffer.byteLength(JSON.stringify({ content: textResult(value), structuredContent: value }))

const toolError = (body: unknown, status: number) =>
  new McpSchema.CallToolResult({ isError: true, content: textResult(body), _meta: { status } })

/** Registers every tool with the MCP server; a call runs the REST request with the caller's key. */
export const ReadToolsLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const inProcess = yield* InProcessApp
    for (const tool of readEndpointTools) {
      yield* server.addTool({
        tool: new McpSchema.Tool({
          name: tool.name,
          title: tool.title,
          description: tool.description,
          inputSchema: tool.inputSchema,
          annotations: new McpSchema.ToolAnnotations({
            title: tool.title,
            readOnlyHint: true,
            destructiveHint: false,
            idempotentHint: true,
            openWorldHint: false
          })
        }),
        handle: (args: unknown) =>
          Effect.gen(function*() {
            const caller = yield* Effect.serviceOption(McpCaller)
            if (Option.isNone(caller)) return toolError({ error: "missing Authorization header" }, 401)
            const decoded = tool.decode(args ?? {})
            if (Either.isLeft(decoded)) return toolError({ error: decoded.left }, 400)
            const params = decoded.right
            const response = yield* inProcess.run({
              method: "GET",
              url: requestUrl(tool, params),
              headers: { authorization: caller.value.authorization },
              origin: caller.value.origin
            })
            const { body, status } = yield* readJson(response)
            if (status < 200 || status >= 300) return toolError(body, status)
            const result = tool.paging === undefined ? body : pageOf(tool.paging, body, params)
            return new McpSchema.CallToolResult({ isError: false, structuredContent: result, content: textResult(result) })
          }).pipe(
            // A failure of the in-process request itself: the same answer REST gives an unexpected failure.
            Effect.catchAllCause(() => Effect.succeed(toolError({ error: "internal error" }, 500))),
            // allow-cast: the handler runs in the fiber of the /mcp request, which carries the server's DefaultServices.
            (effect) => effect as Effect.Effect<McpSchema.CallToolResult>
          )
      })
    }
  })
)
