import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import Ajv from "ajv"
import addFormats from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { DEMO_BRANDS } from "../../src/app/Demo.js"
import { bearer, databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { seedDemo } from "../helpers/demo.js"

/**
 * The MCP server as an AI assistant meets it, through the official SDK client on the demo workspace:
 * instructions, tool descriptions, typed and bounded inputs, output schemas every result satisfies,
 * prompts built of the server's own tools, and errors where JSON-RPC and MCP put them.
 */

type Tool = Awaited<ReturnType<Client["listTools"]>>["tools"][number]
type JsonSchema = Record<string, unknown>

/** The demo workspace (smaller) on the app's own database; a month: the default 30-day window of snapshots is full,
 * as on a workspace in use (their answer's size is tested). */
const DEMO = { days: 31, promptsPerBrand: 5 }

const text = (result: unknown) => {
  const content = (result as { content: Array<{ type: string; text: string }> }).content
  return JSON.parse(content[0]!.text) as unknown
}

for (const backend of databaseBackends()) {
  describe(`MCP server for AI assistants on the demo workspace (${backend})`, () => {
    let app: TestApp
    let key: string
    let client: Client
    let tools: ReadonlyArray<Tool>
    const brand = DEMO_BRANDS[0]!.slug
    const competitor = DEMO_BRANDS[0]!.competitors[0]!.name

    const inProcessFetch = (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input.toString())
      return app.fetch(url.pathname + url.search, init)
    }

    const connect = async () => {
      const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
        fetch: inProcessFetch,
        requestInit: { headers: { authorization: `Bearer ${key}` } }
      })
      const connected = new Client({ name: "aiv-agent-test", version: "1.0.0" })
      await connected.connect(transport)
      return connected
    }

    /** One raw JSON-RPC exchange (what a client without the SDK sends). */
    const post = async (body: string) => {
      const response = await app.fetch("/mcp", {
        method: "POST",
        headers: { ...bearer(key), "content-type": "application/json", accept: "application/json, text/event-stream" },
        body
      })
      const raw = await response.text()
      return { status: response.status, body: raw === "" ? undefined : JSON.parse(raw) }
    }

    beforeAll(async () => {
      app = await makeTestApp(backend)
      key = await seedDemo(app, DEMO)
      client = await connect()
      tools = (await client.listTools()).tools
    }, 180_000)
    afterAll(async () => {
      await client?.close().catch(() => undefined)
      await app?.dispose()
    })

    it("sends instructions that map common questions to the tools", () => {
      const instructions = client.getInstructions() ?? ""
      for (const name of ["list_brands", "get_brand_snapshots", "get_industry_metrics", "get_industry_gap", "get_brand_agents", "get_brand_agent_pages"]) {
        expect(instructions).toContain(name)
      }
      // Every tool named in the instructions exists.
      const named = instructions.match(/\b(list|get)_[a-z_]+\b/g) ?? []
      const names = new Set(tools.map((tool) => tool.name))
      for (const name of named) expect(names.has(name)).toBe(true)
    })

    it("describes every tool for a model: question, parameters with defaults, answer; other tools by name", () => {
      expect(tools.length).toBe(21)
      const names = new Set(tools.map((tool) => tool.name))
      for (const tool of tools) {
        const description = tool.description ?? ""
        expect(description.length).toBeGreaterThan(200)
        // REST paths are written as the tools an assistant calls.
        expect(description).not.toMatch(/GET \/(brands|portfolio|model|topics|citations|industry)/)
        for (const mentioned of description.match(/\b(list|get)_[a-z_]+\b/g) ?? []) expect(names.has(mentioned)).toBe(true)
        if ("range" in (tool.inputSchema.properties ?? {})) expect(description).toContain("default 30d")
        expect(tool.title ?? "").not.toBe("")
      }
      const snapshots = tools.find((tool) => tool.name === "get_brand_snapshots")!
      expect(snapshots.description).toContain("get_portfolio")
      expect(snapshots.description).toContain("95% interval")
    })

    it("says the same in the OpenAPI document as in the tools: the descriptions live on the endpoints", async () => {
      const response = await app.fetch("/api/public/v1/openapi.json")
      const document = JSON.parse(await response.text()) as { paths: Record<string, Record<string, { description?: string; summary?: string }>> }
      const operations = Object.values(document.paths).flatMap((path) => (path["get"] === undefined ? [] : [path["get"]]))
      expect(operations.length).toBe(21)
      const descriptions = tools.map((tool) => tool.description ?? "")
      for (const operation of operations) {
        expect((operation.description ?? "").length).toBeGreaterThan(150)
        // The tool's text starts with the same sentence (paths become tool names further on).
        const firstSentence = operation.description!.split(". ")[0]!
        expect(descriptions.some((description) => description.includes(firstSentence))).toBe(true)
      }
    })

    it("types and bounds every input: enums for closed sets, bounded strings and numbers, no other property", () => {
      for (const tool of tools) {
        expect(tool.inputSchema.type).toBe("object")
        expect((tool.inputSchema as JsonSchema)["additionalProperties"]).toBe(false)
        for (const [name, property] of Object.entries((tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>)) {
          if (property["type"] === "string") expect([name, property["enum"] ?? property["maxLength"]]).not.toEqual([name, undefined])
          if (property["type"] === "integer") expect([name, property["maximum"]]).not.toEqual([name, undefined])
          expect(typeof property["description"]).toBe("string")
        }
      }
      const property = (tool: string, name: string) =>
        ((tools.find((t) => t.name === tool)!.inputSchema.properties ?? {}) as Record<string, JsonSchema>)[name]!
      expect(property("get_brand_agent_pages", "sort")["enum"]).toEqual(["hits", "path", "errors", "uniques"])
      expect(property("get_brand_agent_pages", "dir")["enum"]).toEqual(["asc", "desc"])
      expect(property("get_brand_agent_pages", "kind")["enum"]).toContain("training_crawler")
      expect(property("get_brand_agent_pages", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 500, default: 25 })
      expect(property("get_brand_snapshots", "range")["enum"]).toEqual(["7d", "30d", "90d"])
      expect(property("get_brand_mentions", "sentiment")["enum"]).toEqual(["", "pos", "neu", "neg"])
      expect(property("get_industry_metrics", "engine")["enum"]).toContain("perplexity")
      // Lists come a page at a time, small by default.
      expect(property("get_brand_mentions", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 500, default: 20 })
      expect(property("get_brand_mentions", "offset")).toMatchObject({ type: "integer", minimum: 0 })
    })

    it("answers every tool with structured content its output schema admits, and the same JSON as text", async () => {
      const ajv = new Ajv({ strict: false, allErrors: true })
      addFormats(ajv)
      const args: Record<string, Record<string, unknown>> = {
        get_brand: { slug: brand },
        get_brand_snapshots: { slug: brand, range: "7d" },
        get_brand_mentions: { slug: brand, limit: 3 },
        get_brand_prompts: { slug: brand },
        get_engine_performance: { brand },
        get_brand_agents: { slug: brand },
        get_brand_actions: { slug: brand },
        get_brand_agent_pages: { slug: brand, sort: "errors", limit: 5 },
        get_brand_agent_page_bots: { slug: brand, path: "/pricing" },
        get_brand_search_performance: { slug: brand },
        get_brand_attribution: { slug: brand },
        get_competitor_citations: { name: competitor },
        get_competitor_prompts: { name: competitor, limit: 2 },
        get_industry_metrics: { brand, engine: "perplexity" }
      }
      for (const tool of tools) {
        expect(tool.outputSchema?.type).toBe("object")
        const result = await client.callTool({ name: tool.name, arguments: args[tool.name] ?? {} })
        expect([tool.name, result.isError ?? false]).toEqual([tool.name, false])
        const validate = ajv.compile(tool.outputSchema as JsonSchema)
        const valid = validate(result.structuredContent)
        expect([tool.name, valid ? [] : validate.errors]).toEqual([tool.name, []])
        expect(text(result)).toEqual(result.structuredContent)
      }
      // The demo data is not empty where a report needs it.
      const mentions = await client.callTool({ name: "get_brand_mentions", arguments: { slug: brand, limit: 3 } })
      const page = (mentions.structuredContent as { page: { total: number; returned: number; next_offset: number | null } }).page
      expect(page.returned).toBe(3)
      expect(page.total).toBeGreaterThan(3)
      expect(page.next_offset).toBe(3)
    }, 120_000)

    it("pages a whole-list endpoint: pages are slices of the REST answer, in order, to the end", async () => {
      const rest = await app.fetch(`/api/public/v1/brands/${brand}/mentions`, { headers: bearer(key) })
      const all = (JSON.parse(await rest.text()) as { mentions: Array<{ id: string }> }).mentions
      const seen: Array<string> = []
      let offset: number | null = 0
      while (offset !== null) {
        const result = await client.callTool({ name: "get_brand_mentions", arguments: { slug: brand, limit: 40, offset } })
        const content = result.structuredContent as { mentions: Array<{ id: string }>; count: number; page: { next_offset: number | null; total: number } }
        expect(content.count).toBe(content.mentions.length)
        expect(content.page.total).toBe(all.length)
        seen.push(...content.mentions.map((mention) => mention.id))
        offset = content.page.next_offset
      }
      expect(seen).toEqual(all.map((mention) => mention.id))
    }, 60_000)

    it("keeps a default answer under 64 KB: get_brand_snapshots' default page holds fewer rows when they would not fit", async () => {
      const rest = await app.fetch(`/api/public/v1/brands/${brand}/snapshots?range=90d`, { headers: bearer(key) })
      const all = (JSON.parse(await rest.text()) as { snapshots: Array<{ date: string }> }).snapshots
      for (const args of [{ slug: brand }, { slug: brand, range: "90d" }]) {
        const result = await client.callTool({ name: "get_brand_snapshots", arguments: args })
        expect(result.isError).toBeFalsy()
        const bytes = Buffer.byteLength(JSON.stringify(result))
        expect({ args, under64k: bytes < 64 * 1024 }).toEqual({ args, under64k: true })
        const content = result.structuredContent as { snapshots: Array<{ date: string }>; page: { returned: number; next_offset: number | null; total: number } }
        expect(content.page.returned).toBe(content.snapshots.length)
        expect(content.page.next_offset).toBe(content.page.returned < content.page.total ? content.page.returned : null)
      }
      // Every row of 90 days, page after page of the default size, in order.
      const seen: Array<string> = []
      let offset: number | null = 0
      while (offset !== null) {
        const result = await client.callTool({ name: "get_brand_snapshots", arguments: { slug: brand, range: "90d", offset } })
        const content = result.structuredContent as { snapshots: Array<{ date: string }>; page: { next_offset: number | null } }
        expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(64 * 1024)
        seen.push(...content.snapshots.map((snapshot) => snapshot.date))
        offset = content.page.next_offset
      }
      expect(seen).toEqual(all.map((snapshot) => snapshot.date))
      // A limit the caller gives is honoured, whatever the size.
      const asked = await client.callTool({ name: "get_brand_snapshots", arguments: { slug: brand, range: "90d", limit: all.length } })
      expect((asked.structuredContent as { snapshots: Array<unknown> }).snapshots.length).toBe(all.length)
    }, 120_000)

    it("list_brands takes limit and offset like the other list tools", async () => {
      const listBrands = tools.find((tool) => tool.name === "list_brands")!
      expect(Object.keys(listBrands.inputSchema.properties ?? {}).sort()).toEqual(["limit", "offset"])
      const first = await client.callTool({ name: "list_brands", arguments: { limit: 1 } })
      expect(first.isError).toBeFalsy()
      const content = first.structuredContent as { brands: Array<{ brand_slug: string }>; count: number; page: { total: number; next_offset: number | null } }
      expect(content.brands.length).toBe(1)
      expect(content.count).toBe(1)
      expect(content.page.total).toBe(DEMO_BRANDS.length)
      expect(content.page.next_offset).toBe(DEMO_BRANDS.length > 1 ? 1 : null)
      const whole = await client.callTool({ name: "list_brands", arguments: {} })
      expect((whole.structuredContent as { brands: Array<unknown> }).brands.length).toBe(DEMO_BRANDS.length)
    })

    it("gives every output schema a validation keyword wherever it takes values (the Inspector's --strict)", () => {
      const bare: Array<string> = []
      const walk = (node: unknown, at: string) => {
        if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${at}/${i}`))
        if (typeof node !== "object" || node === null) return
        for (const [name, child] of Object.entries(node)) {
          if (name === "$id") bare.push(`${at}: $id ${JSON.stringify(child)}`)
          if ((name === "additionalProperties" || name === "items") && typeof child === "object" && child !== null && !Array.isArray(child)) {
            const keywords = Object.keys(child).filter((k) => !["title", "description", "$id", "examples", "default"].includes(k))
            if (keywords.length === 0) bare.push(`${at}/${name}`)
          }
          walk(child, `${at}/${name}`)
        }
      }
      for (const tool of tools) walk(tool.outputSchema, tool.name)
      expect(bare).toEqual([])
      const metrics = tools.find((tool) => tool.name === "get_industry_metrics")!
      const methodology = (metrics.outputSchema!.properties as Record<string, { additionalProperties: unknown }>)["methodology"]!
      expect(methodology.additionalProperties).toEqual({ type: "string" })
    })

    it("refuses bad arguments before any request, naming the argument as the REST API does", async () => {
      const refused = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: args })
        expect(result.isError).toBe(true)
        expect(result.structuredContent).toBeUndefined()
        return (text(result) as { error: string }).error
      }
      expect(await refused("list_brands", { unexpected: true })).toBe("invalid unexpected: unknown parameter; list_brands takes limit, offset")
      expect(await refused("get_brand", { slug: brand, extra: 1 })).toStartWith("invalid extra: unknown parameter; get_brand takes slug")
      expect(await refused("get_brand_agent_pages", { slug: brand, sort: "newest" })).toBe("invalid sort: must be one of hits, path, errors, uniques")
      expect(await refused("get_industry_metrics", { engine: "chatgpt-5" })).toStartWith("invalid engine: must be one of chatgpt, perplexity")
      expect(await refused("get_brand_mentions", { slug: brand, limit: 501 })).toBe("invalid limit: must be an integer between 1 and 500")
      expect(await refused("get_brand_mentions", { slug: brand, offset: -1 })).toBe("invalid offset: must be an integer between 0 and 100000")
      expect(await refused("get_brand_agent_pages", { slug: brand, q: "x".repeat(201) })).toBe("invalid q: must be at most 200 characters")
      expect(await refused("get_brand_snapshots", { slug: brand, range: "1y" })).toBe("invalid range: must be one of 7d, 30d, 90d")
      expect(await refused("get_brand_snapshots", {})).toBe("invalid slug: is missing")
      // A REST error keeps its body and status rule: 404 for a brand of no one's account.
      const missing = await client.callTool({ name: "get_brand", arguments: { slug: "no-such-brand" } })
      expect(missing.isError).toBe(true)
      expect(missing.structuredContent).toBeUndefined()
      expect(text(missing)).toEqual({ error: "brand not found" })
      expect((missing._meta as { status?: number } | undefined)?.status).toBe(404)
    })

    it("offers prompts for the common jobs, each made of the server's own tools", async () => {
      const { prompts } = await client.listPrompts()
      expect(prompts.map((prompt) => prompt.name).sort()).toEqual(["ai_crawler_report", "competitor_citation_gap", "weekly_visibility_report"])
      const names = new Set(tools.map((tool) => tool.name))
      const expectations: Record<string, { args: Record<string, string>; tools: ReadonlyArray<string> }> = {
        weekly_visibility_report: { args: { brand }, tools: ["get_brand_snapshots", "get_engine_performance", "get_industry_metrics", "get_brand_mentions"] },
        ai_crawler_report: { args: { brand, range: "7d" }, tools: ["get_brand_agents", "get_brand_agent_pages", "get_brand_attribution"] },
        competitor_citation_gap: { args: { range: "30d" }, tools: ["get_industry_gap", "get_competitor_citations", "get_competitor_prompts"] }
      }
      for (const prompt of prompts) {
        expect(prompt.description ?? "").not.toBe("")
        const expected = expectations[prompt.name]!
        const got = await client.getPrompt({ name: prompt.name, arguments: expected.args })
        const body = (got.messages[0]!.content as { text: string }).text
        for (const tool of expected.tools) expect(body).toContain(tool)
        for (const named of body.match(/\b(list|get)_[a-z_]+\b/g) ?? []) expect(names.has(named)).toBe(true)
        if (expected.args["brand"] !== undefined) expect(body).toContain(`"slug":"${brand}"`)
      }
      const weekly = prompts.find((prompt) => prompt.name === "weekly_visibility_report")!
      expect(weekly.arguments).toEqual([{ name: "brand", description: expect.any(String), required: true }])
      // The brand argument completes from the account's brands.
      const completion = await client.complete({ ref: { type: "ref/prompt", name: "weekly_visibility_report" }, argument: { name: "brand", value: "north" } })
      expect(completion.completion.values).toEqual([brand])
      // Bad prompt arguments are a JSON-RPC invalid-params error.
      const badArguments: Array<Record<string, string>> = [{}, { brand: "Not A Slug" }, { brand, extra: "x" }]
      for (const args of badArguments) {
        const failure = await client.getPrompt({ name: "weekly_visibility_report", arguments: args }).then(() => undefined, (e: unknown) => e)
        expect(failure).toBeInstanceOf(McpError)
        expect((failure as McpError).code).toBe(-32602)
      }
    })

    it("answers protocol errors as JSON-RPC 2.0 errors with the request's id", async () => {
      expect(await post("{not json")).toEqual({ status: 400, body: { jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.any(String) } } })
      expect((await post(`{"jsonrpc":"2.0","id":7,"method":"no/such"}`)).body).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32601, message: "Method not found: no/such" } })
      expect((await post(`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"arguments":{}}}`)).body).toEqual({
        jsonrpc: "2.0", id: "a-1", error: { code: -32602, message: "Invalid params: params.name: is missing" }
      })
      expect((await post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"drop_tables"}}`)).body).toMatchObject({ id: 8, error: { code: -32602 } })
      expect((await post(`{"id":9,"method":"ping"}`)).body).toMatchObject({ id: 9, error: { code: -32600 } })
      expect((await post(`{"jsonrpc":"2.0","id":0,"method":"ping"}`)).body).toEqual({ jsonrpc: "2.0", id: 0, result: {} })
      // Notifications get no answer: 202 and no body.
      expect(await post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)).toEqual({ status: 202, body: undefined })
      // A batch answers each request, by id.
      const batch = await post(`[{"jsonrpc":"2.0","id":"x","method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}]`)
      expect(batch.body).toEqual([{ jsonrpc: "2.0", id: "x", result: {} }, { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found: nope" } }])
    })
  })
}
