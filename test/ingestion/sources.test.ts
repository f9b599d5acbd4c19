import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { drainUrl, gzip, MIXED, mixedDelivery, ndjson, postDrain, query, tenant, type Tenant, UA } from "./fixtures.js"
import { dayOf, EXPECTED, FORMATS, sourceBody, sourceGzip, sourceRecords } from "./sources.js"

/**
 * Every log source through the drain, over HTTP, on every back end (docs/ingestion.md, "Log
 * sources"): forced and detected, plain and gzip, the counts, the hit on its own day in the
 * crawled-pages list, a redelivery stored once, the fields kept, and bad input skipped.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

interface DrainBody {
  accepted: number
  scanned: number
  skipped: number
  monthly_used: number
  monthly_cap: number
  error?: string
}

for (const backend of backends) {
  const db = backend !== "fake"
  describe(`log sources on ${backend}`, () => {
    let app: TestApp

    beforeAll(async () => {
      app = await makeTestApp(backend, { ingest: { maxBodyBytes: 4 * 1024 * 1024, maxInflatedBytes: 8 * 1024 * 1024 } })
    }, 60_000)
    afterAll(() => app.dispose())

    const deliver = async (t: Tenant, body: string | Uint8Array, extra = "") => {
      const response = await postDrain(app, t.key, drainUrl(t.siteId, extra), body)
      return { status: response.status, body: (await json(response)) as DrainBody }
    }
    const pages = async (t: Tenant) => {
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=7d`, { headers: bearer(t.key) })
      expect(response.status).toBe(200)
      return ((await json(response)) as { pages: Array<{ path: string; hits: number; last_seen: string; bots: Array<string> }> }).pages
    }

    for (const format of FORMATS) {
      describe(format, () => {
        it("forced: counts, the hits on their own day, a redelivery stored once", async () => {
          const t = await tenant(app, "growth")
          const records = sourceRecords(format)
          const first = await deliver(t, sourceBody(format, records), `&format=${format}`)
          expect(first.status).toBe(200)
          expect(first.body).toMatchObject({ ...EXPECTED, monthly_used: 2 })
          // The same records again, gzip this time: nothing new.
          const again = await deliver(t, sourceGzip(format, records), `&format=${format}`)
          expect(again.body).toMatchObject({ scanned: EXPECTED.scanned, accepted: 0, skipped: EXPECTED.skipped, monthly_used: 2 })
          const list = await pages(t)
          const gpt = list.find((p) => p.path === `/docs/${format}`)
          const claude = list.find((p) => p.path === `/docs/${format}/second`)
          expect(gpt).toBeDefined()
          expect(claude).toBeDefined()
          expect(gpt!.hits).toBe(1)
          expect(gpt!.bots).toEqual(["GPTBot"])
          expect(claude!.bots).toEqual(["ClaudeBot"])
          expect(dayOf(Date.parse(gpt!.last_seen))).toBe(dayOf(records[0]!.ts))
          expect(Date.parse(gpt!.last_seen)).toBe(Math.floor(records[0]!.ts / 1000) * 1000)
          expect(list.some((p) => p.path.endsWith("/old"))).toBe(false)
        })

        it("detected (auto, gzip): the same answer", async () => {
          const t = await tenant(app, "growth")
          const out = await deliver(t, sourceGzip(format, sourceRecords(format)))
          expect(out.body).toMatchObject({ ...EXPECTED, monthly_used: 2 })
        })

        it("another format forced reads none of it", async () => {
          const t = await tenant(app, "growth")
          const other = format === "combined" ? "akamai" : "combined"
          const out = await deliver(t, sourceBody(format, sourceRecords(format)), `&format=${other}`)
          expect(out.status).toBe(200)
          expect(out.body.accepted).toBe(0)
        })

        if (db) {
          it("stores the time, host, path, query, method, status, referrer, client IP and country", async () => {
            const t = await tenant(app, "growth")
            const records = sourceRecords(format)
            await deliver(t, sourceGzip(format, records))
            const rows = await query<Record<string, unknown>>(
              app,
              `select h.path, h.query, h.host, h.method, h.status, h.client_ip, h.country, h.referrer, h.ts, h.record_key
                 from crawler_hits h join brands b on b.id = h.brand_id where b.site_id = $1 order by h.ts`,
              [t.siteId]
            )
            expect(rows.length).toBe(2)
            const [a, b] = rows
            expect(a).toMatchObject({ path: `/docs/${format}`, query: "lang=en&x=1", method: "GET", status: 200, client_ip: "203.0.113.7" })
            expect(new Date(a!.ts as string).getTime()).toBe(Math.floor(records[0]!.ts / 1000) * 1000)
            expect(b).toMatchObject({ path: `/docs/${format}/second`, query: "", status: null, referrer: "https://example.org/a b" })
            expect(a!.host).toBe(format === "combined" ? "" : "www.acme.com")
            const hasCountry = format === "cloudflare" || format === "fastly" || format === "akamai" || format === "netlify"
            expect(a!.country).toBe(hasCountry ? "DE" : null)
            const platformId = format === "combined" || format === "cloudflare" ? null : `r:${records[0]!.id}`
            if (platformId !== null) expect(a!.record_key).toBe(platformId)
          })
        }
      })
    }

    describe("vercel, and the format parameter", () => {
      it("vercel forced and detected give today's answer", async () => {
        for (const extra of ["&format=vercel", "&format=auto", ""]) {
          const t = await tenant(app, "growth")
          const out = await deliver(t, gzip(ndjson(mixedDelivery())), extra)
          expect(out.body).toMatchObject({ accepted: MIXED.hits, scanned: MIXED.scanned, skipped: MIXED.skipped })
        }
      })

      it("a Vercel delivery forced as cloudflare stores nothing", async () => {
        const t = await tenant(app, "growth")
        const out = await deliver(t, ndjson(mixedDelivery()), "&format=cloudflare")
        expect(out.status).toBe(200)
        expect(out.body.accepted).toBe(0)
      })

      it("a Logpush URL with its header_Authorization parameter is accepted as it is pasted", async () => {
        const t = await tenant(app, "growth")
        const extra = `&format=cloudflare&header_Authorization=Bearer%20${t.key}`
        const out = await deliver(t, sourceGzip("cloudflare", sourceRecords("cloudflare")), extra)
        expect(out.status).toBe(200)
        expect(out.body.accepted).toBe(2)
      })

      it("400 for an unknown format, and nothing is stored", async () => {
        const t = await tenant(app, "growth")
        const response = await postDrain(app, t.key, drainUrl(t.siteId, "&format=syslog"), sourceBody("combined", sourceRecords("combined")))
        expect(response.status).toBe(400)
        const body = (await json(response)) as { error: string }
        expect(body.error.startsWith("invalid format: syslog")).toBe(true)
        const check = await deliver(t, "[]")
        expect(check.body.monthly_used).toBe(0)
      })

      it("a delivery mixing formats reads each record by its own format", async () => {
        const t = await tenant(app, "growth")
        const lines = FORMATS.filter((f) => f !== "cloudfront").map((f) => sourceBody(f, sourceRecords(f))).join("")
        const out = await deliver(t, lines)
        expect(out.body).toMatchObject({ accepted: 2 * 5, scanned: 5 * 5, skipped: 3 * 5 })
      })
    })

    describe("bad input: skipped and counted, the rest stored, never a 500", () => {
      it("a 1 MB User-Agent, a status outside 100..599, a time a week ahead", async () => {
        const t = await tenant(app, "growth")
        const records = sourceRecords("cloudflare")
        const good = sourceBody("cloudflare", records).split("\n").filter((l) => l !== "")
        const bad = [
          JSON.stringify({ ...JSON.parse(good[0]!), RayID: "huge", ClientRequestUserAgent: UA.gptbot + "x".repeat(1024 * 1024) }),
          JSON.stringify({ ...JSON.parse(good[0]!), RayID: "status", EdgeResponseStatus: 999 }),
          JSON.stringify({ ...JSON.parse(good[0]!), RayID: "future", EdgeStartTimestamp: new Date(Date.now() + 7 * 86_400_000).toISOString() })
        ]
        const out = await deliver(t, [...good, ...bad].join("\n"))
        expect(out.status).toBe(200)
        expect(out.body).toMatchObject({ accepted: 2, scanned: 8, skipped: 6 })
      })

      it("a gzip stream cut short keeps the records before the cut", async () => {
        const t = await tenant(app, "growth")
        // 200 GPTBot lines of a combined log, then the gzip cut in its last third.
        const lines = Array.from({ length: 200 }, (_, i) =>
          `198.51.100.${i % 250} - - [${new Date(Date.now() - 3_600_000).toUTCString().slice(5, 16).replace(/ /g, "/")}:10:00:${String(i % 60).padStart(2, "0")} +0000] "GET /cut/${i} HTTP/1.1" 200 10 "-" "${UA.gptbot}"`)
        const whole = gzip(lines.join("\n") + "\n")
        const out = await deliver(t, whole.slice(0, Math.floor(whole.length * 0.7)))
        expect(out.status).toBe(200)
        expect(out.body.accepted).toBeGreaterThan(20)
        expect(out.body.accepted).toBeLessThan(200)
        expect(out.body.accepted).toBe(out.body.scanned)
        // The whole file afterwards stores only the rest: the cut line was not stored half.
        const rest = await deliver(t, whole)
        expect(rest.body.accepted).toBe(200 - out.body.accepted)
      })

      it("corrupt gzip is unparseable: 200 with zero counts", async () => {
        const t = await tenant(app, "growth")
        const body = sourceGzip("combined", sourceRecords("combined"))
        for (let i = 20; i < 40; i++) body[i] = body[i]! ^ 0x5a
        const out = await deliver(t, body)
        expect(out.status).toBe(200)
        expect(out.body).toMatchObject({ accepted: 0, scanned: 0, skipped: 0 })
      })
    })

    it("answers Fastly's logging challenge", async () => {
      const response = await app.fetch("/.well-known/fastly/logging/challenge")
      expect(response.status).toBe(200)
      expect(await response.text()).toBe("*\n")
    })

    it("the batch record's id: a batch sent again stores nothing twice", async () => {
      const t = await tenant(app, "growth")
      const ts = Date.now() - 3_600_000
      const batch = {
        site_id: t.siteId,
        channel: "csv_upload",
        records: [
          { id: "line-1", ua: UA.gptbot, path: "/batch/a?x=1", ts, host: "WWW.acme.com" },
          { id: "line-2", ua: UA.gptbot, path: "/batch/b", ts },
          { id: "x".repeat(201), ua: UA.gptbot, path: "/batch/c", ts }
        ]
      }
      const post = () =>
        app.fetch("/api/public/v1/agents/ingest", {
          method: "POST",
          headers: { ...bearer(t.key), "content-type": "application/json" },
          body: JSON.stringify(batch)
        })
      const first = (await json(await post())) as DrainBody
      expect(first.accepted).toBe(2)
      const second = (await json(await post())) as DrainBody
      expect(second.accepted).toBe(0)
      expect(second.monthly_used).toBe(2)
    })
  })
}
