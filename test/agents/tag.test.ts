import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, databaseBackends, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { query, tenant, type Tenant } from "../ingestion/fixtures.js"
import { NOW, UA } from "./fixtures.js"

/** GET /tag.js and POST /tag/collect (docs/agents.md), on every back end. */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]
const OFF = { limit: 0, windowSeconds: 1 }

const collect = (app: TestApp, ua: string, body: unknown) =>
  app.fetch("/tag/collect", {
    method: "POST",
    headers: { "content-type": "text/plain;charset=UTF-8", "user-agent": ua },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

for (const backend of backends) {
  describe(`the JavaScript tag on ${backend}`, () => {
    let app: TestApp
    let t: Tenant
    beforeAll(async () => {
      app = await makeTestApp(backend, {
        now: NOW,
        config: {
          // Only the per-site limit of the collect endpoint, 5 a minute (the shared RateLimiter).
          rateLimits: {
            apiKey: OFF,
            apiIp: OFF,
            authEmail: OFF,
            authIp: OFF,
            collectSite: { limit: 5, windowSeconds: 60 }
          }
        }
      })
      t = await tenant(app, "growth")
    }, 60_000)
    afterAll(() => app.dispose())

    it("GET /tag.js serves a script under 2 KB bound to the site, cacheable", async () => {
      const response = await app.fetch(`/tag.js?site_id=${t.siteId}`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toStartWith("text/javascript")
      expect(response.headers.get("cache-control")).toBe("public, max-age=3600")
      const script = await response.text()
      expect(new TextEncoder().encode(script).length).toBeLessThan(2048)
      expect(script).toContain(`"${t.siteId}"`)
      expect(script).toContain(`"http://localhost/tag/collect"`)
    })

    it("the snippet of /agents loads exactly that script", async () => {
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents`, { headers: bearer(t.key) })
      const body = (await response.json()) as { tag: { site_id: string; snippet: string } }
      const src = /src="([^"]+)"/.exec(body.tag.snippet)![1]!
      expect(body.tag.snippet).toBe(`<script async src="${src}"></script>`)
      expect((await app.fetch(new URL(src).pathname + new URL(src).search)).status).toBe(200)
    })

    it("the script reports an AI agent's page load and stays silent for a person's browser", async () => {
      const script = await (await app.fetch(`/tag.js?site_id=${t.siteId}`)).text()
      const run = (ua: string) => {
        const sent: Array<{ url: string; body: string }> = []
        const navigator = { userAgent: ua, sendBeacon: (url: string, body: string) => (sent.push({ url, body }), true) }
        const location = { pathname: "/docs/setup", search: "?lang=en", host: "www.acme.test" }
        new Function("navigator", "location", "document", "fetch", script)(navigator, location, { referrer: "https://chatgpt.com/" }, () => {})
        return sent
      }
      expect(run(UA.chrome)).toEqual([])
      const sent = run(UA.chatgptUser)
      expect(sent).toHaveLength(1)
      expect(sent[0]!.url).toBe("http://localhost/tag/collect")
      expect(JSON.parse(sent[0]!.body)).toEqual({ s: t.siteId, u: "/docs/setup?lang=en", h: "www.acme.test", r: "https://chatgpt.com/" })
    })

    it("GET /tag.js: 400 without a UUID site_id, 404 for an unknown one", async () => {
      expect((await app.fetch("/tag.js")).status).toBe(400)
      expect((await app.fetch("/tag.js?site_id=nope")).status).toBe(400)
      expect((await app.fetch(`/tag.js?site_id=${crypto.randomUUID()}`)).status).toBe(404)
    })

    it("POST /tag/collect stores an agent's page load with channel tag, classified by the catalog", async () => {
      const response = await collect(app, UA.chatgptUser, { s: t.siteId, u: "/tagged?x=1", h: "WWW.Acme.test", r: "" })
      expect(response.status).toBe(204)
      expect(response.headers.get("access-control-allow-origin")).toBe("*")
      const list = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=7d&bot=ChatGPT-User`, { headers: bearer(t.key) })
      const body = (await list.json()) as { pages: Array<{ path: string; hits: number; bots: Array<string> }> }
      expect(body.pages).toEqual([expect.objectContaining({ path: "/tagged", hits: 1, bots: ["ChatGPT-User"] })] as never)
      if (backend !== "fake") {
        const rows = await query(app, `select channel, query, host, status, kind from crawler_hits where path = '/tagged'`)
        expect(rows).toEqual([{ channel: "tag", query: "x=1", host: "www.acme.test", status: null, kind: "browsing_agent" }])
      }
    })

    it("a person's browser is not stored; bad bodies are 400, an unknown site 404", async () => {
      expect((await collect(app, UA.chrome, { s: t.siteId, u: "/human" })).status).toBe(204)
      const list = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=7d&q=human`, { headers: bearer(t.key) })
      expect(((await list.json()) as { total: number }).total).toBe(0)
      expect((await collect(app, UA.gptbot, "not json")).status).toBe(400)
      expect((await collect(app, UA.gptbot, { u: "/" })).status).toBe(400)
      expect((await collect(app, UA.gptbot, { s: crypto.randomUUID(), u: "/" })).status).toBe(404)
    })

    it("is rate-limited per site", async () => {
      const fresh = await tenant(app, "growth")
      const statuses: Array<number> = []
      for (let i = 0; i < 7; i++) statuses.push((await collect(app, UA.gptbot, { s: fresh.siteId, u: `/r${i}` })).status)
      expect(statuses).toEqual([204, 204, 204, 204, 204, 429, 429])
      // Another site has its own budget.
      const second = await tenant(app, "growth")
      expect((await collect(app, UA.gptbot, { s: second.siteId, u: "/" })).status).toBe(204)
    })

    it("never counts against the server-log monthly cap: a plan without server-log events still takes tag hits", async () => {
      const free = await tenant(app, "free")
      const response = await collect(app, UA.gptbot, { s: free.siteId, u: "/" })
      expect(response.status).toBe(204)
    })
  })
}
