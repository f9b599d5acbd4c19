import { Context } from "effect"

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
