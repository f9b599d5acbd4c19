import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Option } from "effect"
import { bearer, createBrand, createKey, makeTestApp, signup, type TestApp } from "../helpers/app.js"

/**
 * The tag snippet of the agent dashboard points at the server the customer uses, whether it is read
 * with a key (GET /api/public/v1/brands/{slug}/agents) or through the web application's twin
 * (GET /api/v1/me/brands/{slug}/agents, the public endpoint run in process) or the MCP tool: PUBLIC_URL when set,
 * else the request's own origin, the proxy's forwarded host and scheme only with TRUST_PROXY.
 */

interface Setup {
  readonly app: TestApp
  readonly cookie: string
  readonly key: string
  readonly siteId: string
}

const setUp = async (options: Parameters<typeof makeTestApp>[1]): Promise<Setup> => {
  const app = await makeTestApp("fake", options)
  const cookie = await signup(app, "snippet@example.test")
  const brand = await createBrand(app, cookie, "acme")
  const key = (await createKey(app, cookie)).key
  return { app, cookie, key, siteId: brand.site_id }
}

const snippets = async ({ app, cookie, key }: Setup, headers: Record<string, string>) => {
  const read = async (response: Response) => {
    expect(response.status).toBe(200)
    return ((await response.json()) as { tag: { snippet: string } }).tag.snippet
  }
  const mcp = await app.fetch("/mcp", {
    method: "POST",
    headers: { ...headers, ...bearer(key), "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_brand_agents", arguments: { slug: "acme" } } })
  })
  expect(mcp.status).toBe(200)
  const called = (await mcp.json()) as { result: { structuredContent: { tag: { snippet: string } } } }
  return {
    twin: await read(await app.fetch("/api/v1/me/brands/acme/agents", { headers: { ...headers, cookie } })),
    key: await read(await app.fetch("/api/public/v1/brands/acme/agents", { headers: { ...headers, ...bearer(key) } })),
    mcp: called.result.structuredContent.tag.snippet
  }
}

const tag = (base: string, siteId: string) => `<script async src="${base}/tag.js?site_id=${siteId}"></script>`

describe("the agent dashboard's tag snippet", () => {
  describe("without PUBLIC_URL, without TRUST_PROXY", () => {
    let s: Setup
    beforeAll(async () => {
      s = await setUp({})
    })
    afterAll(() => s.app.dispose())

    it("points at the Host the browser used, through the twin as through the public endpoint", async () => {
      const got = await snippets(s, { host: "shop.example.test:8443" })
      expect(got.twin).toBe(tag("http://shop.example.test:8443", s.siteId))
      expect(got.key).toBe(got.twin)
      expect(got.mcp).toBe(got.twin)
    })

    it("ignores forwarded headers a client may forge", async () => {
      const got = await snippets(s, { host: "shop.example.test", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" })
      expect(got.twin).toBe(tag("http://shop.example.test", s.siteId))
      expect(got.key).toBe(got.twin)
      expect(got.mcp).toBe(got.twin)
    })
  })

  describe("behind a trusted proxy (TRUST_PROXY)", () => {
    let s: Setup
    beforeAll(async () => {
      s = await setUp({ config: { trustProxy: true } })
    })
    afterAll(() => s.app.dispose())

    it("uses the proxy's forwarded host and scheme", async () => {
      const got = await snippets(s, { host: "10.0.0.5:3000", "x-forwarded-host": "app.example.test", "x-forwarded-proto": "https" })
      expect(got.twin).toBe(tag("https://app.example.test", s.siteId))
      expect(got.key).toBe(got.twin)
      expect(got.mcp).toBe(got.twin)
    })

    it("falls back to the Host header without forwarded headers", async () => {
      const got = await snippets(s, { host: "app.example.test:8080" })
      expect(got.twin).toBe(tag("http://app.example.test:8080", s.siteId))
      expect(got.key).toBe(got.twin)
      expect(got.mcp).toBe(got.twin)
    })
  })

  describe("with PUBLIC_URL", () => {
    let s: Setup
    beforeAll(async () => {
      s = await setUp({ config: { publicUrl: Option.some("https://aiv.example.test") } })
    })
    afterAll(() => s.app.dispose())

    it("uses PUBLIC_URL whatever the request says", async () => {
      const got = await snippets(s, { host: "internal:3000" })
      expect(got.twin).toBe(tag("https://aiv.example.test", s.siteId))
      expect(got.key).toBe(got.twin)
      expect(got.mcp).toBe(got.twin)
    })
  })
})
