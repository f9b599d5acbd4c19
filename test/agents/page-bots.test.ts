import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bundledSnapshot } from "../../src/verification/Snapshot.js"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { postBatch, tenant, type Tenant } from "../ingestion/fixtures.js"
import { AGENT, HITS, matchingHits, NOW, type Params, query, toRecord, type Hit } from "./fixtures.js"

/**
 * GET /brands/{slug}/agents/pages/bots (docs/agents.md "The bots of one page"): the bots that fetched
 * one path, each with its hits by verdict, over the hand-made hits of fixtures.ts sent with client IPs
 * that the real verifier judges: an address inside the operator's published ranges (verified), one of a
 * documentation range no operator publishes (spoofed) or none (unverified). Every figure is checked
 * against the reference computed here, and against the pages list and the dashboard's by_bot (the same
 * counting).
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

type Verdict = "verified" | "spoofed" | "unverified"

/** An address inside the first IPv4 prefix the bundled snapshot publishes for `bot`. */
const insideRangeOf = (bot: string) => {
  const file = bundledSnapshot().files.find((f) => f.agents.includes(bot))
  const prefix = file?.prefixes.find((p) => /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(p))
  if (prefix === undefined) throw new Error(`no IPv4 range published for ${bot}`)
  const [address, bits] = prefix.split("/") as [string, string]
  const parts = address.split(".").map(Number)
  // The network's second address (the network address itself when the prefix is one address).
  if (Number(bits) < 32) parts[3] = parts[3]! + 1
  return parts.join(".")
}
const OUTSIDE = "203.0.113.9" // TEST-NET-3: in no operator's ranges

/** The verdict each fixture hit is sent to get, by its index. */
const verdictOf = (index: number): Verdict => (["verified", "spoofed", "unverified"] as const)[index % 3]!
const ipOf = (hit: Hit, index: number) => {
  const verdict = verdictOf(index)
  return verdict === "verified" ? insideRangeOf(AGENT[hit.ua]!.bot) : verdict === "spoofed" ? OUTSIDE : undefined
}
const VERDICT_OF = new Map(HITS.map((hit, i) => [hit, verdictOf(i)]))

interface BotRow {
  bot: string
  vendor: string
  kind: string
  hits: number
  errors: number
  verified: number
  spoofed: number
  unverified: number
  methods: Array<string>
  last_seen: string
}
interface Body {
  brand_slug: string
  range: string
  path: string
  filters: Record<string, string | null>
  hits: number
  errors: number
  last_seen: string | null
  by_verification: Array<{ verification: Verdict; hits: number }>
  bots: Array<BotRow>
  retention_limited: boolean
  coverage_from: string
  ranges_snapshot: string
}

/** The reference answer from the definitions (docs/agents.md), over the fixture hits. */
const expected = (path: string, params: Params & { verification?: Verdict }) => {
  const hits = matchingHits(params).filter((hit) => hit.path === path && (params.verification === undefined || VERDICT_OF.get(hit) === params.verification))
  const bots = new Map<string, BotRow>()
  for (const hit of hits) {
    const agent = AGENT[hit.ua]!
    const row = bots.get(agent.bot) ?? {
      ...agent,
      hits: 0,
      errors: 0,
      verified: 0,
      spoofed: 0,
      unverified: 0,
      methods: ["ip_ranges"],
      last_seen: ""
    }
    row.hits++
    if (hit.status !== null && hit.status >= 400) row.errors++
    row[VERDICT_OF.get(hit)!]++
    const at = new Date(Date.UTC(2026, 4, 20) - hit.daysAgo * 86_400_000 + hit.minute * 60_000).toISOString()
    if (at > row.last_seen) row.last_seen = at
    bots.set(agent.bot, row)
  }
  const list = [...bots.values()].sort((a, b) => b.hits - a.hits || (a.bot < b.bot ? -1 : 1))
  const of = (v: Verdict) => list.reduce((n, b) => n + b[v], 0)
  return {
    hits: hits.length,
    errors: list.reduce((n, b) => n + b.errors, 0),
    last_seen: list.length === 0 ? null : list.map((b) => b.last_seen).sort().at(-1)!,
    by_verification: (["verified", "spoofed", "unverified"] as const).map((verification) => ({ verification, hits: of(verification) })),
    bots: list
  }
}

const FILTERS: ReadonlyArray<Params & { verification?: Verdict }> = [
  {},
  { bot: "GPTBot" },
  { vendor: "OpenAI" },
  { kind: "training_crawler" },
  { verification: "verified" },
  { verification: "spoofed" },
  { vendor: "Anthropic", verification: "unverified" },
  { bot: "NoSuchBot" }
]

for (const backend of backends) {
  describe(`the bots of one crawled page on ${backend}`, () => {
    let app: TestApp
    let t: Tenant
    let other: Tenant

    const get = (path: string, key = t.key) => app.fetch(path, { headers: bearer(key) })
    const pageBots = async (params: Record<string, string | undefined>) => {
      const response = await get(`/api/public/v1/brands/${t.brandSlug}/agents/pages/bots${query(params)}`)
      expect(response.status).toBe(200)
      return (await response.json()) as Body
    }

    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      t = await tenant(app, "growth")
      other = await tenant(app, "growth")
      const records = HITS.map((hit, i) => {
        const ip = ipOf(hit, i)
        return { ...toRecord(hit), ...(ip === undefined ? {} : { ip }) }
      })
      const sent = await postBatch(app, t.key, { site_id: t.siteId, records })
      expect(sent.status).toBe(200)
      // Another account's hits on the same paths are never counted.
      expect((await postBatch(app, other.key, { site_id: other.siteId, records: HITS.map(toRecord) })).status).toBe(200)
    }, 60_000)
    afterAll(() => app.dispose())

    it("lists each bot of /pricing with its hits split by verdict", async () => {
      const body = await pageBots({ path: "/pricing", range: "30d" })
      expect(body).toMatchObject({ brand_slug: t.brandSlug, range: "30d", path: "/pricing", ...expected("/pricing", { range: "30d" }) })
      expect(body.filters).toEqual({ bot: null, vendor: null, kind: null, verification: null })
      expect(body.bots.map((b) => b.bot)).toEqual(["ChatGPT-User", "ClaudeBot"])
      // The fixtures' three verdicts all occur somewhere, and the split adds up per bot.
      for (const bot of body.bots) expect(bot.verified + bot.spoofed + bot.unverified).toBe(bot.hits)
      expect(typeof body.ranges_snapshot).toBe("string")
    })

    for (const range of ["7d", "30d", "90d"] as const) {
      it(`every path and filter at ${range} matches the reference, the pages list and the dashboard's by_bot`, async () => {
        const paths = [...new Set(HITS.map((hit) => hit.path))]
        for (const filter of FILTERS) {
          const params = { range, ...filter }
          const list = (await (await get(`/api/public/v1/brands/${t.brandSlug}/agents/pages${query({ ...params, limit: 500 })}`)).json()) as {
            pages: Array<{ path: string; hits: number; errors: number; uniques: number; bots: Array<string> }>
          }
          const perBot = new Map<string, Record<Verdict, number>>()
          for (const path of paths) {
            const body = await pageBots({ path, ...params })
            expect({ params, path, body: { hits: body.hits, errors: body.errors, last_seen: body.last_seen, by_verification: body.by_verification, bots: body.bots } })
              .toEqual({ params, path, body: expected(path, params) })
            // The same figures as the path's row of the pages list under the same filters.
            const row = list.pages.find((p) => p.path === path)
            expect({ path, hits: body.hits, errors: body.errors, bots: body.bots.map((b) => b.bot).sort() })
              .toEqual({ path, hits: row?.hits ?? 0, errors: row?.errors ?? 0, bots: row?.bots ?? [] })
            for (const bot of body.bots) {
              const sums = perBot.get(bot.bot) ?? { verified: 0, spoofed: 0, unverified: 0 }
              for (const v of ["verified", "spoofed", "unverified"] as const) sums[v] += bot[v]
              perBot.set(bot.bot, sums)
            }
          }
          // Summed over every page, a bot's verdicts are the dashboard's by_bot under verification=<verdict>.
          for (const verdict of ["verified", "spoofed", "unverified"] as const) {
            if (filter.verification !== undefined && filter.verification !== verdict) continue
            const dashboard = (await (await get(`/api/public/v1/brands/${t.brandSlug}/agents${query({ ...params, verification: verdict })}`)).json()) as {
              breakdowns: { by_bot: Array<{ bot: string; hits: number }> }
            }
            const fromPages = [...perBot].map(([bot, sums]) => ({ bot, hits: sums[verdict] })).filter((b) => b.hits > 0)
            expect(fromPages.sort((a, b) => (a.bot < b.bot ? -1 : 1)))
              .toEqual(dashboard.breakdowns.by_bot.map(({ bot, hits }) => ({ bot, hits })).sort((a, b) => (a.bot < b.bot ? -1 : 1)))
          }
        }
      }, 120_000)
    }

    it("finds the stored path from a query string, a full URL or a path without its slash", async () => {
      const reference = await pageBots({ path: "/pricing" })
      for (const path of ["/pricing?utm=x", "https://www.example.com/pricing#plans", "pricing"]) {
        expect(await pageBots({ path })).toEqual(reference)
      }
    })

    it("a page no bot fetched answers zeros, not an error", async () => {
      const body = await pageBots({ path: "/never-fetched" })
      expect(body).toMatchObject({
        path: "/never-fetched",
        hits: 0,
        errors: 0,
        last_seen: null,
        bots: [],
        by_verification: [{ verification: "verified", hits: 0 }, { verification: "spoofed", hits: 0 }, { verification: "unverified", hits: 0 }]
      })
    })

    const bad: ReadonlyArray<[string, string]> = [
      ["", "invalid path: is missing"],
      ["path=", "invalid path: must be a path such as /pricing (1 to 4096 characters)"],
      ["path=%20", "invalid path: must be a path such as /pricing"],
      ["path=/pricing&range=1d", "invalid range: must be one of 7d, 30d, 90d"],
      ["path=/pricing&verification=real", "invalid verification: must be one of verified, spoofed, unverified"]
    ]
    for (const [params, error] of bad) {
      it(`400 for ?${params}`, async () => {
        const response = await get(`/api/public/v1/brands/${t.brandSlug}/agents/pages/bots?${params}`)
        expect(response.status).toBe(400)
        expect(await json(response)).toEqual({ error })
      })
    }

    it("another account's key gets 404 for the brand; the cookie twin answers what the key does", async () => {
      const response = await get(`/api/public/v1/brands/${t.brandSlug}/agents/pages/bots?path=/pricing`, other.key)
      expect(response.status).toBe(404)
      expect(await response.text()).toBe(`{"error":"brand not found"}`)
      const twin = await app.fetch(`/api/v1/me/brands/${t.brandSlug}/agents/pages/bots?path=/pricing&range=90d`, { headers: { cookie: t.cookie } })
      expect(twin.status).toBe(200)
      expect(await twin.json()).toEqual(await pageBots({ path: "/pricing", range: "90d" }))
    })
  })
}
