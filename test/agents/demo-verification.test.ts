import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { DEMO_BRANDS } from "../../src/app/Demo.js"
import { makeCidrSet, parseCidr, parseIp } from "../../src/verification/Cidr.js"
import { bundledSnapshot, indexSnapshot } from "../../src/verification/Snapshot.js"
import { bearer, databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { seedDemo } from "../helpers/demo.js"
import { query } from "../ingestion/fixtures.js"

/**
 * The demo's crawler traffic shows verification (src/app/DemoCrawlerTraffic.ts): its hits come from
 * addresses inside the operators' published ranges (verified by the real verifier) and, for a share,
 * from documentation ranges no operator publishes (spoofed), and /pricing is read by several bots.
 */
for (const backend of databaseBackends()) {
  describe(`the demo's crawler verdicts (${backend})`, () => {
    let app: TestApp
    let key: string
    const slug = DEMO_BRANDS[0]!.slug
    beforeAll(async () => {
      app = await makeTestApp(backend)
      key = await seedDemo(app, { days: 7, engines: ["chatgpt"], promptsPerBrand: 2 })
    }, 300_000)
    afterAll(() => app.dispose())

    it("stores verified and spoofed hits, each verdict true of its address", async () => {
      const dashboard = (await (await app.fetch(`/api/public/v1/brands/${slug}/agents?range=7d`, { headers: bearer(key) })).json()) as {
        kpis: { hits: number }
        breakdowns: { by_verification: Array<{ verification: string; hits: number }> }
      }
      const of = (v: string) => dashboard.breakdowns.by_verification.find((row) => row.verification === v)!.hits
      expect(of("verified")).toBeGreaterThan(dashboard.kpis.hits / 2)
      expect(of("spoofed")).toBeGreaterThan(0)
      expect(of("unverified")).toBeGreaterThan(0)

      // Every stored verdict holds for its address: verified inside the bot's published ranges, spoofed
      // outside them (a documentation range), unverified without an address or for a bot with no ranges.
      const { byBot } = indexSnapshot(bundledSnapshot())
      const documentation = makeCidrSet(["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"].map((c) => parseCidr(c)!))
      const hits = await query<{ bot: string; ip: string | null; verification: string; n: number }>(
        app,
        `select h.bot, h.client_ip as ip, h.verification, count(*)::int as n from crawler_hits h join brands b on b.id = h.brand_id
         where b.slug = $1 group by 1, 2, 3`,
        [slug]
      )
      const seen = new Set<string>()
      for (const hit of hits) {
        const ranges = byBot.get(hit.bot)
        const ip = hit.ip === null ? null : parseIp(hit.ip)
        const judged = ip === null || ranges === undefined ? "unverified" : ranges.has(ip) ? "verified" : "spoofed"
        expect({ bot: hit.bot, ip: hit.ip, verification: hit.verification }).toEqual({ bot: hit.bot, ip: hit.ip, verification: judged })
        if (judged === "spoofed") expect(documentation.has(ip!)).toBe(true)
        seen.add(hit.verification)
      }
      expect([...seen].sort()).toEqual(["spoofed", "unverified", "verified"])
    })

    it("shows several bots on /pricing, with verified hits and spoofed ones among them", async () => {
      const response = await app.fetch(`/api/public/v1/brands/${slug}/agents/pages/bots?path=/pricing&range=7d`, { headers: bearer(key) })
      expect(response.status).toBe(200)
      const body = (await response.json()) as { bots: Array<{ bot: string; hits: number; verified: number; spoofed: number; unverified: number }> }
      expect(body.bots.length).toBeGreaterThanOrEqual(5)
      expect(body.bots.reduce((n, b) => n + b.verified, 0)).toBeGreaterThan(0)
      expect(body.bots.reduce((n, b) => n + b.spoofed, 0)).toBeGreaterThan(0)
    })
  })
}
