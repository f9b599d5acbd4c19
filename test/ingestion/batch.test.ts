import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { postBatch, query, tenant, type Tenant, UA } from "./fixtures.js"

/** POST /agents/ingest, rule by rule (docs/ingestion.md; docs/decisions.md), on every back end. */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

interface IngestBody {
  accepted: number
  monthly_used: number
  monthly_cap: number
}

const record = (ua: string, extra: Record<string, unknown> = {}) => ({
  ua,
  path: "/pricing",
  ref: "",
  ip: "203.0.113.9",
  ts: 1779264000,
  status: 200,
  method: "GET",
  country: "DE",
  ...extra
})

for (const backend of backends) {
  const db = backend !== "fake"
  describe(`batch ingestion on ${backend}`, () => {
    let app: TestApp
    let t: Tenant

    beforeAll(async () => {
      app = await makeTestApp(backend, { ingest: { maxBodyBytes: 2 * 1024 * 1024 } })
      t = await tenant(app, "starter")
    }, 60_000)
    afterAll(() => app.dispose())

    const send = async (tenantOf: Tenant, payload: unknown, headers: Record<string, string> = {}) => {
      const response = await postBatch(app, tenantOf.key, payload, headers)
      return { response, text: await response.text() }
    }

    describe("rule 1: paid plans only", () => {
      it("403 on the free plan", async () => {
        const free = await tenant(app, "free")
        const { response, text } = await send(free, { site_id: free.siteId, records: [record(UA.gptbot)] })
        expect(response.status).toBe(403)
        expect(text).toBe(`{"error":"plan not entitled to server-log ingestion: Starter plan or higher"}`)
      })
      it("200 on starter, growth and enterprise", async () => {
        for (const plan of ["starter", "growth", "enterprise"] as const) {
          const fresh = await tenant(app, plan)
          const { response } = await send(fresh, { site_id: fresh.siteId, records: [record(UA.gptbot)] })
          expect(response.status).toBe(200)
        }
      })
    })

    describe("rule 2: at most 2000 records", () => {
      it("413 for 2001 records, nothing stored", async () => {
        const fresh = await tenant(app, "starter")
        const records = Array.from({ length: 2001 }, () => record(UA.gptbot))
        const { response, text } = await send(fresh, { site_id: fresh.siteId, records })
        expect(response.status).toBe(413)
        expect(text).toBe(`{"error":"too many records: at most 2000 per batch"}`)
        const after = await send(fresh, { site_id: fresh.siteId, records: [] })
        expect((JSON.parse(after.text) as IngestBody).monthly_used).toBe(0)
      })
      it("200 for exactly 2000", async () => {
        const fresh = await tenant(app, "starter")
        const records = Array.from({ length: 2000 }, (_, i) => record(i % 5 === 0 ? UA.gptbot : UA.chrome, { path: `/p/${i}` }))
        const { response, text } = await send(fresh, { site_id: fresh.siteId, records })
        expect(response.status).toBe(200)
        expect(JSON.parse(text)).toEqual({ accepted: 400, monthly_used: 400, monthly_cap: 100_000 })
      })
      it("413 for a body over the configured size, before it is read", async () => {
        const big = JSON.stringify({ site_id: t.siteId, records: [record(UA.gptbot, { path: "/" + "x".repeat(3 * 1024 * 1024) })] })
        // A web Request built in process carries no Content-Length of its own; a client on the wire sends it.
        const { response, text } = await send(t, big, { "content-length": String(Buffer.byteLength(big)) })
        expect(response.status).toBe(413)
        expect(JSON.parse(text).error).toStartWith("request body too large")
      })
    })

    describe("rules 3 and 4: classified; hits stored; accepted, monthly_used, monthly_cap", () => {
      it("counts crawler hits only, in exactly three fields", async () => {
        const fresh = await tenant(app, "starter")
        const { response, text } = await send(fresh, {
          site_id: fresh.siteId,
          channel: "edge_worker",
          records: [record(UA.gptbot), record(UA.claudebot), record(UA.chrome), record(UA.googlebot), record(UA.perplexitybot)]
        })
        expect(response.status).toBe(200)
        expect(text).toBe(`{"accepted":3,"monthly_used":3,"monthly_cap":100000}`)
      })

      if (db) {
        it("stores each field (path and query apart, ts in seconds or milliseconds, channel)", async () => {
          const fresh = await tenant(app, "starter")
          await send(fresh, {
            site_id: fresh.siteId,
            channel: "cdn_webhook",
            records: [
              record(UA.gptbot, { path: "/docs/a?lang=de", ts: 1779264000, status: 404, method: "head", country: "de", ref: "https://example.org/" }),
              record(UA.claudebot, { path: "/b", ts: 1779264000123, status: undefined, ip: undefined, country: undefined })
            ]
          })
          const rows = await query<any>(app, `
            select h.bot, h.path, h.query, h.ts, h.status, h.method, h.country, h.client_ip, h.referrer, h.channel, h.host
            from crawler_hits h join brands b on b.id = h.brand_id where b.site_id = $1 order by h.bot desc`, [fresh.siteId])
          expect(rows.length).toBe(2)
          expect(rows[0]).toMatchObject({ bot: "GPTBot", path: "/docs/a", query: "lang=de", status: 404, method: "HEAD", country: "DE", client_ip: "203.0.113.9", referrer: "https://example.org/", channel: "cdn_webhook", host: "" })
          expect(new Date(rows[0].ts).getTime()).toBe(1779264000 * 1000)
          expect(rows[1]).toMatchObject({ bot: "ClaudeBot", path: "/b", query: "", status: null, country: null, client_ip: null, channel: "cdn_webhook" })
          expect(new Date(rows[1].ts).getTime()).toBe(1779264000123)
        })

        it("a record without ts gets the receive time; the default channel is api", async () => {
          const fresh = await tenant(app, "starter")
          const before = Date.now()
          await send(fresh, { site_id: fresh.siteId, records: [{ ua: UA.gptbot, path: "/" }] })
          const [row] = await query<any>(app, `
            select h.ts, h.channel from crawler_hits h join brands b on b.id = h.brand_id where b.site_id = $1`, [fresh.siteId])
          expect(row.channel).toBe("api")
          expect(new Date(row.ts).getTime()).toBeGreaterThanOrEqual(before - 1000)
          expect(new Date(row.ts).getTime()).toBeLessThanOrEqual(Date.now() + 1000)
        })

        it("AI referrals are stored apart and not counted", async () => {
          const fresh = await tenant(app, "starter")
          const { text } = await send(fresh, {
            site_id: fresh.siteId,
            channel: "csv_upload",
            records: [record(UA.chrome, { ref: "https://claude.ai/chat/123" }), record(UA.safari, { ref: "https://gemini.google.com/app" })]
          })
          expect(JSON.parse(text)).toEqual({ accepted: 0, monthly_used: 0, monthly_cap: 100_000 })
          const rows = await query<any>(app, `
            select r.engine, r.channel from ai_referrals r join brands b on b.id = r.brand_id where b.site_id = $1 order by r.engine`, [fresh.siteId])
          expect(rows).toEqual([{ engine: "claude", channel: "csv_upload" }, { engine: "gemini", channel: "csv_upload" }])
        })
      }
    })

    describe("records are validated one by one", () => {
      it("a record missing ua or path, or with a wrongly typed field, is skipped, not the batch", async () => {
        const fresh = await tenant(app, "starter")
        const { response, text } = await send(fresh, {
          site_id: fresh.siteId,
          records: [
            { path: "/no-ua" },
            { ua: UA.gptbot },
            { ua: UA.gptbot, path: "" },
            { ua: UA.gptbot, path: "/x", status: "200" },
            { ua: UA.gptbot, path: "/x", ts: "yesterday" },
            { ua: UA.gptbot, path: "/x", ts: 12.5 },
            "GPTBot",
            null,
            [UA.gptbot, "/x"],
            { ua: UA.gptbot, path: "/ok-1" },
            record(UA.claudebot, { path: "/ok-2" })
          ]
        })
        expect(response.status).toBe(200)
        expect(JSON.parse(text)).toMatchObject({ accepted: 2, monthly_used: 2 })
      })
    })

    describe("channel (docs/decisions.md)", () => {
      for (const channel of ["edge_worker", "cdn_webhook", "csv_upload", "api"]) {
        it(`accepts ${channel}`, async () => {
          const { response } = await send(t, { site_id: t.siteId, channel, records: [] })
          expect(response.status).toBe(200)
        })
      }
      for (const channel of ["drain", "tag", "EDGE_WORKER", "webhook"]) {
        it(`400 for ${channel}`, async () => {
          const { response, text } = await send(t, { site_id: t.siteId, channel, records: [] })
          expect(response.status).toBe(400)
          expect(text).toBe(`{"error":"invalid channel: must be one of edge_worker, cdn_webhook, csv_upload, api"}`)
        })
      }
    })

    describe("site_id and body errors", () => {
      it("404 unknown site_id, 403 another account's", async () => {
        const other = await tenant(app, "starter")
        const unknown = await send(t, { site_id: crypto.randomUUID(), records: [] })
        expect(unknown.response.status).toBe(404)
        expect(unknown.text).toBe(`{"error":"unknown site_id"}`)
        const foreign = await send(t, { site_id: other.siteId, records: [record(UA.gptbot)] })
        expect(foreign.response.status).toBe(403)
        expect(foreign.text).toBe(`{"error":"site_id not owned by this account"}`)
      })
      it("400 for a body that is not JSON, without site_id, or with records not an array", async () => {
        const cases: ReadonlyArray<unknown> = [`{"site_id":`, { records: [] }, { site_id: t.siteId, records: "x" }, { site_id: t.siteId }]
        for (const payload of cases) {
          const { response, text } = await send(t, payload)
          expect(response.status).toBe(400)
          expect(typeof JSON.parse(text).error).toBe("string")
        }
      })
      it("401 without a key", async () => {
        const response = await app.fetch("/api/public/v1/agents/ingest", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ site_id: t.siteId, records: [] })
        })
        expect(response.status).toBe(401)
        expect(await response.text()).toBe(`{"error":"missing Authorization header"}`)
        const bad = await app.fetch("/api/public/v1/agents/ingest", {
          method: "POST",
          headers: { ...bearer("aivkey_unknown"), "content-type": "application/json" },
          body: "{}"
        })
        expect(bad.status).toBe(401)
      })
    })
  })
}
