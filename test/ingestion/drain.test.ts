import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import {
  array,
  buildRecord,
  drainUrl,
  functionOutput,
  gzip,
  MIXED,
  mixedDelivery,
  ndjson,
  postDrain,
  query,
  requestRecord,
  setPlan,
  sign,
  tenant,
  type Tenant,
  UA
} from "./fixtures.js"

/** POST /agents/ingest/drain, rule by rule (docs/ingestion.md; docs/decisions.md), on every back end. */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]
const GROWTH_CAP = 1_000_000

interface DrainBody {
  accepted: number
  scanned: number
  skipped: number
  monthly_used: number
  monthly_cap: number
}

for (const backend of backends) {
  const db = backend !== "fake"
  describe(`drain on ${backend}`, () => {
    let app: TestApp
    let t: Tenant

    beforeAll(async () => {
      app = await makeTestApp(backend, { ingest: { maxBodyBytes: 4 * 1024 * 1024, maxInflatedBytes: 8 * 1024 * 1024 } })
      t = await tenant(app, "growth")
    }, 60_000)
    afterAll(() => app.dispose())

    const deliver = async (tenantOf: Tenant, body: string | Uint8Array, headers: Record<string, string> = {}, extra = "") => {
      const response = await postDrain(app, tenantOf.key, drainUrl(tenantOf.siteId, extra), body, headers)
      return { response, body: (await json(response)) as DrainBody & { error?: string } }
    }

    describe("rule 1: encoding from the content, gzip by magic bytes", () => {
      const cases: ReadonlyArray<[string, () => string | Uint8Array, string]> = [
        ["NDJSON labelled application/x-ndjson", () => ndjson(mixedDelivery()), "application/x-ndjson"],
        ["NDJSON labelled application/json", () => ndjson(mixedDelivery()), "application/json"],
        ["a JSON array labelled application/x-ndjson", () => array(mixedDelivery()), "application/x-ndjson"],
        ["a JSON array labelled text/plain", () => array(mixedDelivery()), "text/plain"],
        ["gzip NDJSON labelled application/json", () => gzip(ndjson(mixedDelivery())), "application/json"],
        ["gzip JSON array without a gzip label", () => gzip(array(mixedDelivery())), "application/octet-stream"],
        ["NDJSON with CRLF line ends and blank lines", () => mixedDelivery().map((r) => JSON.stringify(r)).join("\r\n\r\n"), "application/x-ndjson"]
      ]
      for (const [name, body, contentType] of cases) {
        it(name, async () => {
          const fresh = await tenant(app, "growth")
          const { response, body: out } = await deliver(fresh, body(), { "content-type": contentType })
          expect(response.status).toBe(200)
          expect(out).toEqual({ accepted: MIXED.hits, scanned: MIXED.scanned, skipped: MIXED.skipped, monthly_used: MIXED.hits, monthly_cap: GROWTH_CAP })
        })
      }

      it("answers exactly the five documented fields", async () => {
        const { body } = await deliver(t, ndjson([requestRecord({ ua: UA.gptbot })]))
        expect(Object.keys(body).sort()).toEqual(["accepted", "monthly_cap", "monthly_used", "scanned", "skipped"])
      })
    })

    describe("site_id (docs/ingestion.md)", () => {
      it("may come in header X-Service-Site instead of the query", async () => {
        const response = await app.fetch("/api/public/v1/agents/ingest/drain", {
          method: "POST",
          headers: { ...bearer(t.key), "x-service-site": t.siteId },
          body: ndjson([requestRecord({ ua: UA.claudebot })])
        })
        expect(response.status).toBe(200)
        expect(((await json(response)) as DrainBody).accepted).toBe(1)
      })

      it("400 missing site_id", async () => {
        const response = await app.fetch("/api/public/v1/agents/ingest/drain", {
          method: "POST",
          headers: bearer(t.key),
          body: ndjson([requestRecord({ ua: UA.claudebot })])
        })
        expect(response.status).toBe(400)
        expect(await response.text()).toBe(`{"error":"missing site_id"}`)
      })

      it("404 for an unknown site_id (and for one that is not a UUID)", async () => {
        for (const site of [crypto.randomUUID(), "not-a-uuid"]) {
          const response = await postDrain(app, t.key, drainUrl(site), ndjson([requestRecord({ ua: UA.gptbot })]))
          expect(response.status).toBe(404)
          expect(await response.text()).toBe(`{"error":"unknown site_id"}`)
        }
      })

      it("403 for another account's site_id, and nothing is stored", async () => {
        const other = await tenant(app, "growth")
        const response = await postDrain(app, t.key, drainUrl(other.siteId), ndjson([requestRecord({ ua: UA.gptbot })]))
        expect(response.status).toBe(403)
        expect(await response.text()).toBe(`{"error":"site_id not owned by this account"}`)
        const check = await deliver(other, ndjson([buildRecord()]))
        expect(check.body.monthly_used).toBe(0)
      })
    })

    describe("x-drain-verify on every response", () => {
      const verify = "vrf_7f3c2a9e1b"
      it("on a 200", async () => {
        const { response } = await deliver(t, ndjson([buildRecord()]), {}, `&verify=${verify}`)
        expect(response.status).toBe(200)
        expect(response.headers.get("x-drain-verify")).toBe(verify)
      })
      it("on a 401 (no key, bad key)", async () => {
        for (const headers of [{}, { authorization: "Bearer aivkey_nope" }] as ReadonlyArray<Record<string, string>>) {
          const response = await app.fetch(drainUrl(t.siteId, `&verify=${verify}`), { method: "POST", headers, body: "[]" })
          expect(response.status).toBe(401)
          expect(response.headers.get("x-drain-verify")).toBe(verify)
        }
      })
      it("on a 400, 403 and 404", async () => {
        const other = await tenant(app, "growth")
        const urls: ReadonlyArray<[string, number]> = [
          [`/api/public/v1/agents/ingest/drain?verify=${verify}`, 400],
          [drainUrl(other.siteId, `&verify=${verify}`), 403],
          [drainUrl(crypto.randomUUID(), `&verify=${verify}`), 404]
        ]
        for (const [url, status] of urls) {
          const response = await postDrain(app, t.key, url, "[]")
          expect(response.status).toBe(status)
          expect(response.headers.get("x-drain-verify")).toBe(verify)
        }
      })
      it("a repeated verify echoes the first value; no verify, no header", async () => {
        const { response } = await deliver(t, "[]", {}, "&verify=first&verify=second")
        expect(response.headers.get("x-drain-verify")).toBe("first")
        const plain = await deliver(t, "[]")
        expect(plain.response.headers.get("x-drain-verify")).toBeNull()
      })
    })

    describe("rule 2: signature only when a secret is saved", () => {
      let signed: Tenant
      const secret = "whsec_drain_7c1e0f"
      beforeAll(async () => {
        signed = await tenant(app, "growth")
        const response = await app.fetch(`/api/v1/me/brands/${signed.brandSlug}/drain-secret`, {
          method: "PUT",
          headers: { cookie: signed.cookie, "content-type": "application/json" },
          body: JSON.stringify({ secret })
        })
        expect(response.status).toBe(204)
      }, 60_000)

      it("without a saved secret any signature (or none) passes", async () => {
        const { response } = await deliver(t, ndjson([buildRecord()]), { "x-drain-signature": "00" })
        expect(response.status).toBe(200)
      })
      it("403 when the signature is missing", async () => {
        const { response, body } = await deliver(signed, ndjson([requestRecord({ ua: UA.gptbot })]))
        expect(response.status).toBe(403)
        expect(body).toEqual({ error: "missing x-drain-signature" } as never)
      })
      it("403 when it does not match (wrong secret, other body, not hex)", async () => {
        const body = ndjson([requestRecord({ ua: UA.gptbot })])
        for (const signature of [sign("other", body), sign(secret, body + " "), "zz".repeat(20)]) {
          const out = await deliver(signed, body, { "x-drain-signature": signature })
          expect(out.response.status).toBe(403)
          expect(out.body).toEqual({ error: "x-drain-signature mismatch" } as never)
        }
      })
      it("200 with the hex HMAC-SHA1 of the raw body (plain, gzip, upper case)", async () => {
        const plain = ndjson([requestRecord({ ua: UA.gptbot })])
        const zipped = gzip(ndjson([requestRecord({ ua: UA.claudebot })]))
        for (const [body, signature] of [[plain, sign(secret, plain)], [zipped, sign(secret, zipped).toUpperCase()]] as const) {
          const out = await deliver(signed, body, { "x-drain-signature": signature })
          expect(out.response.status).toBe(200)
          expect(out.body.accepted).toBe(1)
        }
      })
    })

    describe("rule 3: records without proxy are skipped, not errors", () => {
      it("build and function output only: 200, all skipped", async () => {
        const fresh = await tenant(app, "growth")
        const { response, body } = await deliver(fresh, ndjson([buildRecord(), functionOutput("lambda"), functionOutput("edge")]))
        expect(response.status).toBe(200)
        expect(body).toEqual({ accepted: 0, scanned: 3, skipped: 3, monthly_used: 0, monthly_cap: GROWTH_CAP })
      })
      it("a proxy without a method is not a request", async () => {
        const record = requestRecord({ ua: UA.gptbot }) as unknown as { proxy: Record<string, unknown> }
        delete record.proxy.method
        const { body } = await deliver(t, ndjson([record]))
        expect(body.accepted).toBe(0)
        expect(body.skipped).toBe(1)
      })
    })

    describe("rule 4: classified with the catalog; other requests skipped", () => {
      it("browsers and search engines that are not AI crawlers are skipped", async () => {
        const { body } = await deliver(t, ndjson([
          requestRecord({ ua: UA.chrome }),
          requestRecord({ ua: UA.googlebot }),
          requestRecord({ ua: UA.perplexitybot, source: "static", path: "/llms.txt" })
        ]))
        expect(body.accepted).toBe(1)
        expect(body.scanned).toBe(3)
        expect(body.skipped).toBe(2)
      })

      if (db) {
        it("stores a hit as docs/agents.md says (proxy.host preferred, -1 is no status, absent clientIp)", async () => {
          const fresh = await tenant(app, "growth")
          const ts = Date.UTC(2026, 4, 21, 9, 30, 15, 250)
          await deliver(fresh, ndjson([
            requestRecord({ source: "external", ua: UA.chatgptUser, path: "/pricing?plan=pro&x=1", status: -1, clientIp: null, ts }),
            requestRecord({ source: "edge", ua: UA.gptbot, path: "/docs", proxyHost: null, ts, method: "head" })
          ]))
          const rows = await query<any>(app, `
            select h.bot, h.vendor, h.kind, h.host, h.path, h.query, h.method, h.status, h.client_ip, h.country, h.referrer,
                   h.channel, h.ts from crawler_hits h join brands b on b.id = h.brand_id
            where b.site_id = $1 order by h.bot`, [fresh.siteId])
          expect(rows.length).toBe(2)
          expect(rows[0]).toMatchObject({
            bot: "ChatGPT-User", vendor: "OpenAI", kind: "browsing_agent", host: "www.acme.com", path: "/pricing",
            query: "plan=pro&x=1", method: "GET", status: null, client_ip: null, country: null, channel: "drain"
          })
          expect(new Date(rows[0].ts).getTime()).toBe(ts)
          // No proxy.host: the record's (deployment) host.
          expect(rows[1]).toMatchObject({ bot: "GPTBot", host: "acme-git-main-acme.vercel.app", path: "/docs", query: "", method: "HEAD", status: 200, client_ip: "120.75.16.101" })
        })

        it("counts the delivery in the rollup per (brand, day, path, bot, status) at once", async () => {
          const fresh = await tenant(app, "growth")
          const day1 = Date.UTC(2026, 4, 21, 10)
          const day2 = Date.UTC(2026, 4, 22, 10)
          const records = [
            requestRecord({ ua: UA.gptbot, path: "/a", ts: day1 }),
            requestRecord({ ua: UA.gptbot, path: "/a?x=1", ts: day1 + 1000 }),
            requestRecord({ ua: UA.gptbot, path: "/a", ts: day1, status: 404 }),
            requestRecord({ ua: UA.gptbot, path: "/a", ts: day2 }),
            requestRecord({ ua: UA.claudebot, path: "/a", ts: day1, status: -1 }),
            requestRecord({ ua: UA.claudebot, path: "/a", ts: day1 + 5, status: -1 })
          ]
          await deliver(fresh, ndjson(records))
          const rows = await query<any>(app, `
            select to_char(r.day, 'YYYY-MM-DD') as day, r.path, r.bot, r.status, r.vendor, r.kind, r.hits
            from crawler_rollup_exact r join brands b on b.id = r.brand_id where b.site_id = $1
            order by r.bot, r.day, r.status nulls first`, [fresh.siteId])
          expect(rows).toEqual([
            { day: "2026-05-21", path: "/a", bot: "ClaudeBot", status: null, vendor: "Anthropic", kind: "training_crawler", hits: 2 },
            { day: "2026-05-21", path: "/a", bot: "GPTBot", status: 200, vendor: "OpenAI", kind: "training_crawler", hits: 2 },
            { day: "2026-05-21", path: "/a", bot: "GPTBot", status: 404, vendor: "OpenAI", kind: "training_crawler", hits: 1 },
            { day: "2026-05-22", path: "/a", bot: "GPTBot", status: 200, vendor: "OpenAI", kind: "training_crawler", hits: 1 }
          ])
          // A second delivery adds to the same rows.
          await deliver(fresh, ndjson([requestRecord({ ua: UA.gptbot, path: "/a", ts: day2 + 60_000 })]))
          const [again] = await query<any>(app, `
            select r.hits from crawler_rollup_exact r join brands b on b.id = r.brand_id
            where b.site_id = $1 and r.day = '2026-05-22' and r.bot = 'GPTBot'`, [fresh.siteId])
          expect(again.hits).toBe(2)
        })

        it("stores AI referrals apart, in skipped and not against the cap", async () => {
          const fresh = await tenant(app, "growth")
          const { body } = await deliver(fresh, ndjson([
            requestRecord({ ua: UA.chrome, path: "/pricing", referer: "https://chatgpt.com/" }),
            requestRecord({ ua: UA.safari, path: "/blog/x", referer: "https://www.perplexity.ai/search?q=acme" }),
            requestRecord({ ua: UA.chrome, path: "/", referer: "https://www.google.com/" })
          ]))
          expect(body).toEqual({ accepted: 0, scanned: 3, skipped: 3, monthly_used: 0, monthly_cap: GROWTH_CAP })
          const rows = await query<any>(app, `
            select r.engine, r.path, r.channel from ai_referrals r join brands b on b.id = r.brand_id
            where b.site_id = $1 order by r.engine`, [fresh.siteId])
          expect(rows).toEqual([
            { engine: "chatgpt", path: "/pricing", channel: "drain" },
            { engine: "perplexity", path: "/blog/x", channel: "drain" }
          ])
        })
      }

      it("a redelivery of the same records (same ids) stores nothing twice", async () => {
        const fresh = await tenant(app, "growth")
        const body = ndjson(mixedDelivery())
        const first = await deliver(fresh, body)
        const second = await deliver(fresh, body)
        expect(first.body.accepted).toBe(MIXED.hits)
        expect(second.body.accepted).toBe(0)
        expect(second.body.monthly_used).toBe(MIXED.hits)
      })
    })

    describe("rule 5: unparseable bodies and deliveries without requests answer 200", () => {
      const bodies: ReadonlyArray<[string, string | Uint8Array]> = [
        ["an empty body", ""],
        ["plain text", "hello, this is not a log"],
        ["truncated JSON", array(mixedDelivery()).slice(0, 300)],
        ["binary noise", new Uint8Array([0, 1, 2, 3, 255, 254, 10, 13, 0])],
        ["a truncated gzip", gzip(ndjson(mixedDelivery())).slice(0, 40)],
        ["a bare JSON string", `"hello"`],
        ["an empty array", "[]"]
      ]
      for (const [name, body] of bodies) {
        it(name, async () => {
          const out = await deliver(t, body)
          expect(out.response.status).toBe(200)
          expect(out.body.accepted).toBe(0)
          expect(out.body.monthly_cap).toBe(GROWTH_CAP)
          expect(out.body.scanned).toBeLessThanOrEqual(1)
        })
      }

      it("good NDJSON lines count even when others are broken (a broken line is scanned and skipped)", async () => {
        const fresh = await tenant(app, "growth")
        const text = [JSON.stringify(requestRecord({ ua: UA.gptbot })), "{broken", JSON.stringify(buildRecord())].join("\n")
        const out = await deliver(fresh, text)
        expect(out.body).toEqual({ accepted: 1, scanned: 3, skipped: 2, monthly_used: 1, monthly_cap: GROWTH_CAP })
      })
    })

    describe("bodies are bounded (configurable)", () => {
      it("a gzip bomb is refused as unparseable, in bounded memory", async () => {
        // 1 GiB of zeros in about 1 MB; the limit of this app is 8 MiB inflated.
        const bomb = gzip(new Uint8Array(1024 * 1024 * 1024))
        const before = process.memoryUsage().rss
        const out = await deliver(t, bomb)
        const grown = process.memoryUsage().rss - before
        expect(out.response.status).toBe(200)
        expect(out.body).toMatchObject({ accepted: 0, scanned: 0, skipped: 0 })
        expect(grown).toBeLessThan(256 * 1024 * 1024)
      })
      it("a body over the size limit is not read: unparseable, 200", async () => {
        const big = new Uint8Array(5 * 1024 * 1024).fill(0x20)
        // Chunked (no Content-Length: cut off while streaming), and with a Content-Length (not read at all).
        for (const headers of [{}, { "content-length": String(big.length) }] as ReadonlyArray<Record<string, string>>) {
          const out = await deliver(t, big, headers)
          expect(out.response.status).toBe(200)
          expect(out.body).toMatchObject({ accepted: 0, scanned: 0, skipped: 0 })
        }
      })
    })

    describe("rule 7: Growth plan or higher", () => {
      for (const plan of ["free", "starter"] as const) {
        it(`403 on ${plan}`, async () => {
          const fresh = await tenant(app, plan)
          const { response, body } = await deliver(fresh, ndjson([requestRecord({ ua: UA.gptbot })]), {}, "&verify=v1")
          expect(response.status).toBe(403)
          expect(body).toEqual({ error: "plan not entitled to log-drain ingestion: Growth plan or higher" } as never)
          expect(response.headers.get("x-drain-verify")).toBe("v1")
        })
      }
      it("200 on enterprise, with its cap", async () => {
        const fresh = await tenant(app, "growth")
        await setPlan(app, fresh.email, "enterprise")
        const { body } = await deliver(fresh, ndjson([requestRecord({ ua: UA.gptbot })]))
        expect(body).toMatchObject({ accepted: 1, monthly_cap: 50_000_000 })
      })
    })
  })
}
