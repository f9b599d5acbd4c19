import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Option } from "effect"
import { databaseBackends, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { query, tenant, type Tenant } from "../ingestion/fixtures.js"
import { UA } from "../agents/fixtures.js"

/**
 * The anonymous JavaScript tag (docs/security.md): its own allowance (per site, per client IP,
 * per day), never the server-log cap; hits marked unauthenticated; the client IP by the one rule;
 * the 8 KiB cap on chunked bodies; /tag.js built from configuration or trusted headers only.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]
const OFF = { limit: 0, windowSeconds: 1 }

const collect = (app: TestApp, body: unknown, headers: Record<string, string> = {}) =>
  app.fetch("/tag/collect", {
    method: "POST",
    headers: { "content-type": "text/plain;charset=UTF-8", "user-agent": UA.gptbot, ...headers },
    body: JSON.stringify(body)
  })

for (const backend of backends) {
  describe(`the tag cannot spend or lock the account's quota, on ${backend}`, () => {
    let app: TestApp
    let t: Tenant
    beforeAll(async () => {
      app = await makeTestApp(backend, {
        config: {
          trustProxy: true,
          rateLimits: {
            apiKey: OFF,
            apiIp: OFF,
            authEmail: OFF,
            authIp: OFF,
            collectSite: OFF,
            collectSiteDay: { limit: 6, windowSeconds: 86_400 },
            collectIpDay: { limit: 3, windowSeconds: 86_400 }
          }
        }
      })
      t = await tenant(app, "starter")
    }, 60_000)
    afterAll(() => app.dispose())

    it("per client IP a day, then per site a day; the server-log usage and the owner's deliveries are untouched", async () => {
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) {
        statuses.push((await collect(app, { s: t.siteId, u: `/ip-a/${i}` }, { "x-forwarded-for": "203.0.113.250, 198.51.100.1" })).status)
      }
      // The last X-Forwarded-For entry is the client (the first is whatever the client wrote).
      expect(statuses).toEqual([204, 204, 204, 429])
      for (let i = 0; i < 4; i++) {
        statuses.push((await collect(app, { s: t.siteId, u: `/ip-b/${i}` }, { "x-forwarded-for": "198.51.100.2" })).status)
      }
      // 6 a day for the site: 3 + 3, then refused whatever the address.
      expect(statuses.slice(4)).toEqual([204, 204, 204, 429])
      // The owner's server logs still go in, and the tag's hits did not count in the month's usage.
      const batch = await app.fetch("/api/public/v1/agents/ingest", {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: JSON.stringify({ site_id: t.siteId, channel: "api", records: [{ ua: UA.gptbot, path: "/owner", ts: Math.floor(Date.now() / 1000), status: 200 }] })
      })
      expect(batch.status).toBe(200)
      expect(((await batch.json()) as { monthly_used: number }).monthly_used).toBe(1)
      if (backend !== "fake") {
        const rows = await query<{ channel: string; unauthenticated: boolean; client_ip: string | null; n: number }>(
          app,
          `select channel, unauthenticated, client_ip, count(*)::int as n from crawler_hits where path like '/ip-%' or path = '/owner'
           group by 1, 2, 3 order by 1, 3`
        )
        expect(rows).toEqual([
          { channel: "api", unauthenticated: false, client_ip: null, n: 1 },
          { channel: "tag", unauthenticated: true, client_ip: "198.51.100.1", n: 3 },
          { channel: "tag", unauthenticated: true, client_ip: "198.51.100.2", n: 3 }
        ])
      }
    })
  })
}

describe("the tag's bodies and script", () => {
  let app: TestApp
  let t: Tenant
  let untrusted: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake")
    t = await tenant(app, "growth")
    untrusted = app
  })
  afterAll(() => app.dispose())

  it("a chunked body past 8 KiB is refused 413 and read no further", async () => {
    let pulled = 0
    const chunk = new Uint8Array(64 * 1024).fill(0x20)
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength
        if (pulled > 20 * 1024 * 1024) controller.close()
        else controller.enqueue(chunk)
      }
    })
    const response = await app.fetch("/tag/collect", {
      method: "POST",
      headers: { "content-type": "text/plain", "user-agent": UA.gptbot },
      body: endless,
      duplex: "half"
    } as RequestInit)
    expect(response.status).toBe(413)
    expect(pulled).toBeLessThan(1024 * 1024)
  })

  it("a same-site page posting with the visitor's session cookie is not refused by the dashboard's CSRF guard", async () => {
    const response = await collect(app, { s: t.siteId, u: "/same-site" }, { cookie: t.cookie, origin: "https://www.acme.test" })
    expect(response.status).toBe(204)
  })

  it("/tag.js ignores X-Forwarded-Host without TRUST_PROXY and says what it varies on", async () => {
    const response = await untrusted.fetch(`/tag.js?site_id=${t.siteId}`, {
      headers: { host: "localhost", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" }
    })
    expect(response.status).toBe(200)
    const script = await response.text()
    expect(script).not.toContain("evil.example")
    expect(script).toContain(`"http://localhost/tag/collect"`)
    expect(response.headers.get("vary")).toContain("Host")
  })

  it("with PUBLIC_URL, /tag.js uses it whatever the headers", async () => {
    const configured = await makeTestApp("fake", { config: { publicUrl: Option.some("https://api.example.com") } })
    try {
      const owner = await tenant(configured, "growth")
      const response = await configured.fetch(`/tag.js?site_id=${owner.siteId}`, { headers: { "x-forwarded-host": "evil.example", host: "other.example" } })
      const script = await response.text()
      expect(script).toContain(`"https://api.example.com/tag/collect"`)
      expect(script).not.toContain("evil.example")
      expect(script).not.toContain("other.example")
    } finally {
      await configured.dispose()
    }
  })
})
