import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, createBrand, createKey, makeTestApp, signup, type TestApp } from "../helpers/app.js"

/**
 * The MCP server at /mcp, driven by the official MCP TypeScript SDK client over the Streamable
 * HTTP transport (its fetch goes to the in-process app: the same HttpApp the server serves).
 */
describe("MCP server (official SDK client)", () => {
  let app: TestApp
  let cookie: string
  let key: string
  let keyId: string

  const inProcessFetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input.toString())
    return app.fetch(url.pathname + url.search, init)
  }

  const connect = async (authorization: string | undefined) => {
    const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
      fetch: inProcessFetch,
      requestInit: { headers: authorization === undefined ? {} : { authorization } }
    })
    const client = new Client({ name: "aiv-test", version: "1.0.0" })
    await client.connect(transport)
    return client
  }

  /** The REST answer of the same request, with the same key. */
  const rest = async (path: string, token = key) => {
    const response = await app.fetch(`/api/public/v1${path}`, { headers: bearer(token) })
    return { status: response.status, body: JSON.parse(await response.text()) }
  }

  beforeAll(async () => {
    app = await makeTestApp("pglite")
    cookie = await signup(app, "mcp@example.test")
    await createBrand(app, cookie, "acme")
    const created = await createKey(app, cookie, "assistant")
    key = created.key
    keyId = created.id
  }, 30_000)
  afterAll(() => app.dispose())

  it("lists one read-only tool per public read endpoint, with the endpoints' parameter schemas", async () => {
    const client = await connect(`Bearer ${key}`)
    const { tools } = await client.listTools()
    expect(tools.length).toBe(21)
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "get_brand",
      "get_brand_actions",
      "get_brand_agent_page_bots",
      "get_brand_agent_pages",
      "get_brand_agents",
      "get_brand_attribution",
      "get_brand_mentions",
      "get_brand_prompts",
      "get_brand_search_performance",
      "get_brand_snapshots",
      "get_citation_fanouts",
      "get_citations",
      "get_competitor_citations",
      "get_competitor_prompts",
      "get_engine_performance",
      "get_industry_gap",
      "get_industry_metrics",
      "get_industry_ranking",
      "get_portfolio",
      "get_topics",
      "list_brands"
    ])
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint).toBe(true)
      expect(tool.annotations?.destructiveHint).toBe(false)
      expect(tool.inputSchema.type).toBe("object")
    }
    const pages = tools.find((tool) => tool.name === "get_brand_agent_pages")!
    const properties = pages.inputSchema.properties as Record<string, Record<string, unknown>>
    expect(pages.inputSchema.required).toEqual(["slug"])
    expect(properties["slug"]!["pattern"]).toBe("^[a-z0-9-]+$")
    expect(properties["range"]!["enum"]).toEqual(["7d", "30d", "90d"])
    expect(properties["limit"]).toMatchObject({ type: "integer", minimum: 1, maximum: 500 })
    expect(Object.keys(properties).sort()).toEqual(
      ["bot", "dir", "folder", "kind", "limit", "offset", "q", "range", "slug", "sort", "status", "vendor", "verification"]
    )
    const competitor = tools.find((tool) => tool.name === "get_competitor_prompts")!
    expect(competitor.inputSchema.required).toEqual(["name"])
    await client.close()
  })

  it("answers a tool call with the REST endpoint's JSON", async () => {
    const client = await connect(`Bearer ${key}`)
    const list = await client.callTool({ name: "list_brands", arguments: {} })
    const rested = await rest("/brands")
    // The REST answer, with the page the tool adds (list_brands pages as the other list tools do).
    const expected = { ...rested.body, page: { offset: 0, limit: 50, returned: 1, total: 1, next_offset: null } }
    expect(list.isError).toBeFalsy()
    expect(list.structuredContent).toEqual(expected)
    expect(JSON.parse((list.content as Array<{ text: string }>)[0]!.text)).toEqual(expected)

    const brand = await client.callTool({ name: "get_brand", arguments: { slug: "acme" } })
    expect(brand.structuredContent).toEqual((await rest("/brands/acme")).body)
    await client.close()
  })

  it("get_brand_actions: says when to call it, takes slug and range, answers the REST actions with a typed output", async () => {
    const client = await connect(`Bearer ${key}`)
    const { tools } = await client.listTools()
    const tool = tools.find((t) => t.name === "get_brand_actions")!
    expect(tool.description).toContain("what to do next")
    expect(tool.description).toContain("what to fix first")
    expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual(["range", "slug"])
    expect(tool.inputSchema.required).toEqual(["slug"])
    const output = JSON.stringify(tool.outputSchema)
    for (const kind of ["fix_crawler_errors", "serve_llms_txt", "block_spoofed", "earn_citations_from", "win_prompt"]) {
      expect(output).toContain(kind)
    }
    const result = await client.callTool({ name: "get_brand_actions", arguments: { slug: "acme", range: "7d" } })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual((await rest("/brands/acme/actions?range=7d")).body)
    const bad = await client.callTool({ name: "get_brand_actions", arguments: { slug: "acme", range: "8d" } })
    expect(bad.isError).toBe(true)
    await client.close()
  })

  it("gives a REST error answer as a tool error with the same body", async () => {
    const client = await connect(`Bearer ${key}`)
    const missing = await client.callTool({ name: "get_brand", arguments: { slug: "nope" } })
    expect(missing.isError).toBe(true)
    expect(JSON.parse((missing.content as Array<{ text: string }>)[0]!.text)).toEqual({ error: "brand not found" })

    // Whatever the endpoint answers today (501 until its issue lands, then data), the tool says the same.
    const pages = await client.callTool({ name: "get_brand_agent_pages", arguments: { slug: "acme", limit: 5, sort: "errors" } })
    const expected = await rest("/brands/acme/agents/pages?limit=5&sort=errors")
    expect(Boolean(pages.isError)).toBe(expected.status >= 400)
    expect(JSON.parse((pages.content as Array<{ text: string }>)[0]!.text)).toEqual(expected.body)
    await client.close()
  })

  it("answers arguments the endpoint refuses with the endpoint's own 400 body", async () => {
    const client = await connect(`Bearer ${key}`)
    const text = (result: Awaited<ReturnType<typeof client.callTool>>) => JSON.parse((result.content as Array<{ text: string }>)[0]!.text)
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ slug: "acme", limit: "abc" }, "/brands/acme/agents/pages?limit=abc"],
      [{ slug: "acme", limit: 0 }, "/brands/acme/agents/pages?limit=0"],
      [{ slug: "acme", range: "5d" }, "/brands/acme/agents/pages?range=5d"],
      [{ slug: "Not A Slug" }, "/brands/Not%20A%20Slug/agents/pages"]
    ]
    for (const [args, path] of cases) {
      const result = await client.callTool({ name: "get_brand_agent_pages", arguments: args })
      const expected = await rest(path)
      expect(expected.status).toBe(400)
      expect(result.isError).toBe(true)
      expect(text(result)).toEqual(expected.body)
    }
    const noSlug = await client.callTool({ name: "get_brand_agent_pages", arguments: {} })
    expect(noSlug.isError).toBe(true)
    expect(text(noSlug)).toEqual({ error: "invalid slug: is missing" })
    await client.close()
  })

  it("refuses requests without a valid key with the public API's 401 bodies", async () => {
    const cases: Array<[string | undefined, string]> = [
      [undefined, "missing Authorization header"],
      ["Basic dXNlcjpwYXNz", "Authorization must be Bearer <token>"],
      ["Bearer ", "empty bearer token"],
      ["Bearer aivkey_not-a-real-key", "invalid API key"]
    ]
    for (const [authorization, error] of cases) {
      const failure = await connect(authorization).then(() => undefined, (e: unknown) => e as Error)
      expect(failure).toBeInstanceOf(Error)
      expect((failure as Error & { code?: number }).code).toBe(401)
      expect(failure!.message).toContain(JSON.stringify({ error }))
      // The same body as the REST API gives.
      const response = await app.fetch("/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
      expect(response.status).toBe(401)
      expect(await response.text()).toBe(JSON.stringify({ error }))
    }
  })

  it("refuses a key on the next request once it is revoked", async () => {
    const client = await connect(`Bearer ${key}`)
    expect((await client.callTool({ name: "list_brands", arguments: {} })).isError).toBeFalsy()
    const revoked = await app.fetch(`/api/v1/me/api-keys/${keyId}/revoke`, { method: "POST", headers: { cookie } })
    expect(revoked.status).toBe(200)
    const failure = await client.callTool({ name: "list_brands", arguments: {} }).then(() => undefined, (e: unknown) => e as Error)
    expect((failure as Error & { code?: number }).code).toBe(401)
    expect(failure!.message).toContain(`{"error":"invalid API key"}`)
    await client.close().catch(() => undefined)
  })

  it("answers GET and DELETE with 405 (no server stream, no sessions)", async () => {
    const fresh = await createKey(app, cookie, "second")
    for (const method of ["GET", "DELETE"]) {
      const response = await app.fetch("/mcp", { method, headers: bearer(fresh.key) })
      expect(response.status).toBe(405)
    }
  })
})
