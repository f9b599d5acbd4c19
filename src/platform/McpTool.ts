import { Context, Option, SchemaAST } from "effect"

/**
 * How a public read endpoint is offered as an MCP tool, annotated on the endpoint beside its path and
 * schemas (src/mcp reads it through HttpApi.reflect): the tool's name; `page` for a list the endpoint
 * returns whole, which the tool pages (the array field and its default page size); `defaultLimit` for an
 * endpoint that pages itself, the tool's smaller default `limit`. No effect on the REST API or OpenAPI.
 */
export interface McpToolOptions {
  readonly name: string
  readonly page?: { readonly field: string; readonly limit: number }
  readonly defaultLimit?: number
}

export class McpTool extends Context.Tag("McpTool")<McpTool, McpToolOptions>() {}

/**
 * The closed set of values a free-string query parameter means something for, annotated on the
 * parameter's Schema (the REST endpoint takes any string and falls back, or matches nothing, on the
 * others): an MCP tool offers the set as an enum, so an assistant cannot send a value that silently
 * means nothing. No effect on the REST API or OpenAPI.
 */
export const ClosedSet: unique symbol = Symbol.for("ai-visibility/ClosedSet")

/** The annotation to spread into a parameter's `annotations({...})`. */
export const closedSet = (values: ReadonlyArray<string>) => ({ [ClosedSet]: values })

/** The closed set annotated on a parameter's Schema, if any. */
export const closedSetOf = (ast: SchemaAST.AST): ReadonlyArray<string> | undefined =>
  Option.getOrUndefined(SchemaAST.getAnnotation<ReadonlyArray<string>>(ClosedSet)(ast))
