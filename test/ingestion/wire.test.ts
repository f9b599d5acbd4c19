import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { createHmac } from "node:crypto"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { drainUrl, gzip, ndjson, postBatch, postDrain, query, requestRecord, tenant, type Tenant, UA } from "./fixtures.js"

/**
 * What real platforms send, over HTTP, on every back end (docs/ingestion.md, "The platforms' real
 * wire"): a Vercel drain signed and verified under Vercel's own header names, one stored path per
 * page whatever the source logged, nginx's absolute-form request lines and `\xHH` escapes,
 * CloudFront's JSON records, Fastly's country names, and Google's second user-triggered range file.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

interface DrainBody {
  accepted: number
  scanned: number
  skipped: number
  error?: string
}
interface Pages {
  pages: Array<{ path: string; hits: number; bots: Array<string> }>
}

const HOUR = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const pad = (n: number) => String(n).padStart(2, "0")
const clf = (ms: number) => {
  const d = new Date(ms)
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`
}
/** Vercel's signature: the hex HMAC-SHA1 of the raw body with the drain's secret. */
const vercelSignature = (secret: string, body: string | Uint8Array) => createHmac("sha1", secret).update(body).digest("hex")

for (const backend of backends) {
  const db = backend !== "fake"
  describe(`the platforms' real wire on ${backend}`, () => {
    let app: TestApp

    beforeAll(async () => {
      app = await makeTestApp(backend)
    }, 60_000)
    afterAll(() => app.dispose())

    const deliver = async (t: Tenant, body: string | Uint8Array, extra = "", headers: Record<string, string> = {}) => {
      const response = await postDrain(app, t.key, drainUrl(t.siteId, extra), body, headers)
      return { response, body: (await json(response)) as DrainBody }
    }
    const pages = async (t: Tenant, q?: string) => {
      const filter = q === undefined ? "" : `&q=${encodeURIComponent(q)}`
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=7d${filter}`, { headers: bearer(t.key) })
      expect(response.status).toBe(200)
      return ((await json(response)) as Pages).pages
    }
    const stored = (t: Tenant, columns = "h.path, h.query, h.host, h.referrer, h.country") =>
      query<Record<string, unknown>>(
        app,
        `select ${columns} from crawler_hits h join brands b on b.id = h.brand_id where b.site_id = $1 order by h.ts, h.path`,
        [t.siteId]
      )

    describe("a Vercel drain with a secret, under Vercel's header names", () => {
      const secret = "vercel-drain-secret-4f1c"
      let signed: Tenant
      beforeAll(async () => {
        signed = await tenant(app, "growth")
        const response = await app.fetch(`/api/v1/me/brands/${signed.brandSlug}/drain-secret`, {
          method: "PUT",
          headers: { cookie: signed.cookie, "content-type": "application/json" },
          body: JSON.stringify({ secret })
        })
        expect(response.status).toBe(204)
      }, 60_000)

      it("x-vercel-signature with the real HMAC-SHA1 of the body is accepted (JSON array and gzip NDJSON)", async () => {
        const array = JSON.stringify([requestRecord({ ua: UA.gptbot, path: "/vercel/a" })])
        const zipped = gzip(ndjson([requestRecord({ ua: UA.claudebot, path: "/vercel/b" })]))
        for (const body of [array, zipped]) {
          const out = await deliver(signed, body, "", { "x-vercel-signature": vercelSignature(secret, body) })
          expect(out.response.status).toBe(200)
          expect(out.body.accepted).toBe(1)
        }
      })

      it("a wrong x-vercel-signature is refused; neither header is refused as before; x-drain-signature still works", async () => {
        const body = ndjson([requestRecord({ ua: UA.gptbot, path: "/vercel/c" })])
        const wrong = await deliver(signed, body, "", { "x-vercel-signature": vercelSignature("another secret", body) })
        expect(wrong.response.status).toBe(403)
        expect(wrong.body.error).toBe("x-drain-signature mismatch")
        const none = await deliver(signed, body)
        expect(none.response.status).toBe(403)
        expect(none.body.error).toBe("missing x-drain-signature")
        const neutral = await deliver(signed, body, "", { "x-drain-signature": vercelSignature(secret, body) })
        expect(neutral.response.status).toBe(200)
        expect(neutral.body.accepted).toBe(1)
      })

      it("the verify token comes back in x-vercel-verify as well as x-drain-verify, whatever the status", async () => {
        const body = ndjson([requestRecord({ ua: UA.gptbot, path: "/vercel/d" })])
        const ok = await deliver(signed, body, "&verify=tok-1", { "x-vercel-signature": vercelSignature(secret, body) })
        expect(ok.response.status).toBe(200)
        expect(ok.response.headers.get("x-vercel-verify")).toBe("tok-1")
        expect(ok.response.headers.get("x-drain-verify")).toBe("tok-1")
        const refused = await deliver(signed, body, "&verify=tok-2")
        expect(refused.response.status).toBe(403)
        expect(refused.response.headers.get("x-vercel-verify")).toBe("tok-2")
        const unauthorized = await app.fetch(drainUrl(signed.siteId, "&verify=tok-3"), { method: "POST", body })
        expect(unauthorized.status).toBe(401)
        expect(unauthorized.headers.get("x-vercel-verify")).toBe("tok-3")
      })
    })

    describe("one page, one path, whatever the source", () => {
      it("/caf%C3%A9%20menu sent in every format, decoded, lower-case or upper-case, is one row", async () => {
        const t = await tenant(app, "growth")
        const ts = Date.now() - HOUR
        const encoded = "/caf%C3%A9%20menu"
        const lower = "/caf%c3%a9%20menu"
        const decoded = "/café menu"
        const deliveries: ReadonlyArray<readonly [string, string]> = [
          ["vercel", ndjson([requestRecord({ ua: UA.gptbot, path: `${encoded}?x=1`, ts })])],
          ["cloudflare", JSON.stringify({ RayID: "8c1f9e0a7b6d5c01", EdgeStartTimestamp: iso(ts), ClientRequestURI: lower, ClientRequestHost: "www.acme.com", ClientRequestMethod: "GET", ClientRequestUserAgent: UA.gptbot, EdgeResponseStatus: 200, ClientIP: "203.0.113.7" })],
          ["fastly", JSON.stringify({ timestamp: iso(ts), request_id: "fastly-cafe-1", client_ip: "203.0.113.7", host: "www.acme.com", url: encoded, request_method: "GET", response_status: 200, request_user_agent: UA.gptbot })],
          ["akamai", JSON.stringify({ reqId: "akamai-cafe-1", reqTimeSec: String(ts / 1000), reqPath: decoded, reqHost: "www.acme.com", reqMethod: "GET", statusCode: "200", UA: encodeURIComponent(UA.gptbot), cliIP: "203.0.113.7" })],
          ["netlify", JSON.stringify({ log_type: "traffic", request_id: "netlify-cafe-1", timestamp: iso(ts), client_ip: "203.0.113.7", hostname: "www.acme.com", method: "GET", url: lower, status_code: 200, user_agent: UA.gptbot })],
          ["cloudfront", [iso(ts).slice(0, 10), iso(ts).slice(11, 19), "FRA56-P1", "5120", "203.0.113.7", "GET", "d111111abcdef8.cloudfront.net", encoded, "200", "-", encodeURIComponent(UA.gptbot), "-", "-", "Miss", "cf-cafe-1", "www.acme.com"].join("\t")],
          ["combined", `203.0.113.7 - - [${clf(ts)}] "GET ${lower} HTTP/1.1" 200 5120 "-" "${UA.gptbot}"`]
        ]
        for (const [format, body] of deliveries) {
          const out = await deliver(t, body + "\n", `&format=${format}`)
          expect([format, out.body.accepted]).toEqual([format, 1])
        }
        const batch = await postBatch(app, t.key, { site_id: t.siteId, records: [{ ua: UA.gptbot, path: decoded, ts: Math.floor(ts / 1000) }] })
        expect(((await batch.json()) as { accepted: number }).accepted).toBe(1)
        const cafe = (await pages(t)).filter((p) => p.path.toLowerCase().includes("caf"))
        expect(cafe).toEqual([expect.objectContaining({ path: encoded, hits: deliveries.length + 1 })])
        // The search reads what a person types, as the path is stored: decoded or escaped, any case.
        for (const q of ["café menu", "CAFÉ", "caf%c3%a9%20", "%43af%C3%A9"]) {
          expect([q, (await pages(t, q)).map((p) => p.path)]).toEqual([q, [encoded]])
        }
        if (db) {
          const rows = await stored(t, "h.path")
          expect([...new Set(rows.map((r) => r.path))]).toEqual([encoded])
        }
      })
    })

    describe("nginx and Apache lines as the servers write them", () => {
      it("an absolute-form request line gives its host and path", async () => {
        const t = await tenant(app, "growth")
        const line = `203.0.113.7 - - [${clf(Date.now() - HOUR)}] "GET http://www.acme.com/absolute/x?y=1 HTTP/1.1" 200 10 "-" "${UA.gptbot}"`
        const out = await deliver(t, line + "\n", "&format=combined")
        expect(out.body.accepted).toBe(1)
        expect((await pages(t)).map((p) => p.path)).toEqual(["/absolute/x"])
        if (db) expect(await stored(t, "h.host, h.path, h.query")).toEqual([{ host: "www.acme.com", path: "/absolute/x", query: "y=1" }])
      })

      it("nginx's \\xHH escapes are decoded in the User-Agent and the referrer", async () => {
        const t = await tenant(app, "growth")
        // nginx writes `"` as \x22 and bytes of 0x7F and up as \xHH: the bot token stands between quotes.
        const ua = `Mozilla/5.0 (compatible; \\x22GPTBot/1.2\\x22) caf\\xC3\\xA9`
        const line = `203.0.113.7 - - [${clf(Date.now() - HOUR)}] "GET /escaped HTTP/1.1" 200 10 "https://example.org/?q=\\x22x\\x22" "${ua}"`
        const out = await deliver(t, line + "\n")
        expect(out.body.accepted).toBe(1)
        expect((await pages(t))[0]!.bots).toEqual(["GPTBot"])
        if (db) {
          // The User-Agent is not stored (its bot is, above); the referrer is.
          const [row] = await stored(t)
          expect(row!.referrer).toBe(`https://example.org/?q="x"`)
        }
      })
    })

    describe("CloudFront standard logging v2, JSON output", () => {
      const records = (ts: number, n: number) =>
        [
          { date: iso(ts).slice(0, 10), time: iso(ts).slice(11, 19), "x-edge-location": "FRA56-P1", "c-ip": "203.0.113.7", "cs-method": "GET", "cs(Host)": "d111111abcdef8.cloudfront.net", "x-host-header": "www.acme.com", "cs-uri-stem": "/cf-json/a", "sc-status": "200", "cs(Referer)": "-", "cs(User-Agent)": encodeURIComponent(UA.gptbot), "cs-uri-query": "lang=en", "x-edge-request-id": `cfjson-a-${n}` },
          { timestamp: String((ts + 1000) / 1000), "c-ip": "203.0.113.8", "cs-method": "GET", "cs(Host)": "www.acme.com", "cs-uri-stem": "/cf-json/b", "sc-status": 200, "cs(User-Agent)": encodeURIComponent(UA.claudebot), "x-edge-request-id": `cfjson-b-${n}` },
          { date: iso(ts).slice(0, 10), time: iso(ts).slice(11, 19), "c-ip": "203.0.113.9", "cs-method": "GET", "cs-uri-stem": "/", "sc-status": "200", "cs(User-Agent)": encodeURIComponent(UA.chrome), "x-edge-request-id": `cfjson-c-${n}` }
        ]
      it("read as cloudfront, forced or detected (NDJSON and a JSON array)", async () => {
        const t = await tenant(app, "growth")
        const ts = Date.now() - HOUR
        const forced = await deliver(t, ndjson(records(ts, 1)), "&format=cloudfront")
        expect(forced.body).toMatchObject({ accepted: 2, scanned: 3, skipped: 1 })
        const detected = await deliver(t, JSON.stringify(records(ts, 2)))
        expect(detected.body).toMatchObject({ accepted: 2, scanned: 3, skipped: 1 })
        const list = await pages(t)
        expect(list.find((p) => p.path === "/cf-json/a")?.hits).toBe(2)
        expect(list.find((p) => p.path === "/cf-json/b")?.bots).toEqual(["ClaudeBot"])
        if (db) {
          const rows = await stored(t, "h.host, h.path, h.query, h.client_ip")
          expect(rows[0]).toEqual({ host: "www.acme.com", path: "/cf-json/a", query: "lang=en", client_ip: "203.0.113.7" })
        }
      })
    })

    describe("Fastly's example format", () => {
      it("geo_country as a name or a code is stored as the ISO code", async () => {
        const t = await tenant(app, "growth")
        const ts = Date.now() - HOUR
        const line = (id: string, path: string, country: Record<string, string>) =>
          JSON.stringify({ timestamp: iso(ts), client_ip: "203.0.113.7", ...country, host: "www.acme.com", url: path, request_method: "GET", request_protocol: "HTTP/2", request_referer: "", request_user_agent: UA.gptbot, response_state: "MISS", response_status: 200, request_id: id })
        const body = [
          line("fastly-geo-1", "/geo/a", { geo_country: "Germany", geo_city: "berlin" }),
          line("fastly-geo-2", "/geo/b", { geo_country: "united states" }),
          line("fastly-geo-3", "/geo/c", { geo_country: "FR" })
        ].join("\n")
        const out = await deliver(t, body, "&format=fastly")
        expect(out.body.accepted).toBe(3)
        if (db) expect((await stored(t, "h.path, h.country")).map((r) => r.country)).toEqual(["DE", "US", "FR"])
      })
    })

    describe("Google's two user-triggered range files", () => {
      it("Google-NotebookLM from Google's own fetcher addresses is verified, not spoofed", async () => {
        const t = await tenant(app, "growth")
        const notebook = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Google-NotebookLM; +https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers)"
        const ts = Math.floor((Date.now() - HOUR) / 1000)
        const response = await postBatch(app, t.key, {
          site_id: t.siteId,
          records: [
            { ua: notebook, path: "/nb", ts, ip: "66.249.83.100" },
            { ua: notebook, path: "/nb", ts, ip: "2001:4860:4801:4004::7" },
            { ua: notebook, path: "/nb", ts, ip: "203.0.113.9" }
          ]
        })
        expect(((await response.json()) as { accepted: number }).accepted).toBe(3)
        const dashboard = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents?range=7d`, { headers: bearer(t.key) })
        const verdicts = Object.fromEntries(
          ((await dashboard.json()) as { breakdowns: { by_verification: Array<{ verification: string; hits: number }> } })
            .breakdowns.by_verification.map((v) => [v.verification, v.hits])
        )
        expect(verdicts).toMatchObject({ verified: 2, spoofed: 1 })
      })
    })
  })
}
