import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { makeClassifier, loadCatalog } from "../../src/catalog/Classifier.js"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { folded, postBatch, query as sqlQuery, tenant, type Tenant } from "../ingestion/fixtures.js"
import { AGENT, expectedPages, HITS, matchingHits, NOW, type Params, query, toRecord, UA, VISITS } from "./fixtures.js"

/**
 * The four agent-analytics endpoints over hand-made hits with known answers (docs/agents.md):
 * every parameter, sort, tie and filter combination against the reference answer of fixtures.ts,
 * paging, totals that add up across the dashboard, 400s, isolation, on every back end.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

interface Page {
  path: string
  hits: number
  errors: number
  uniques: number
  bots: Array<string>
  last_seen: string
}
interface PagesBody {
  pages: Array<Page>
  total: number
  limit: number
  offset: number
  retention_limited: boolean
  coverage_from: string
}
interface Dashboard {
  range: string
  filters: { bot: string | null; vendor: string | null; kind: string | null }
  kpis: { hits: number; pages: number; bots: number; error_rate: number }
  trend: Array<{ date: string; hits: number; by_kind: Record<string, number> }>
  breakdowns: {
    by_bot: Array<{ bot: string; vendor: string; kind: string; hits: number }>
    by_vendor: Array<{ vendor: string; hits: number }>
    by_kind: Array<{ kind: string; hits: number }>
    by_status: Array<{ status: number | null; hits: number }>
  }
  top_pages: Array<Page>
  tag: { site_id: string; snippet: string }
  retention_limited: boolean
  coverage_from: string
}

const FILTERS: ReadonlyArray<Params> = [
  {},
  { bot: "GPTBot" },
  { vendor: "OpenAI" },
  { kind: "search_crawler" },
  { vendor: "OpenAI", kind: "search_crawler" },
  { bot: "GPTBot", vendor: "Anthropic" }, // AND: nothing
  { bot: "NoSuchBot" },
  { vendor: "openai" } // exact match: nothing
]
const SORTS: ReadonlyArray<Pick<Params, "sort" | "dir">> = [
  {},
  { dir: "asc" }, // dir without sort: ignored
  { sort: "hits" },
  { sort: "hits", dir: "asc" },
  { sort: "path" },
  { sort: "path", dir: "desc" },
  { sort: "errors" },
  { sort: "errors", dir: "asc" },
  { sort: "uniques" },
  { sort: "uniques", dir: "asc" },
  { sort: "bogus" },
  { sort: "bogus", dir: "asc" }
]
const NARROWING: ReadonlyArray<Params> = [
  {},
  { folder: "docs" },
  { folder: "/docs/" },
  { folder: "/" },
  { q: "DOCS" },
  { q: "txt" },
  { status: "ok" },
  { status: "error" },
  { status: "404" },
  { status: "200" },
  { folder: "docs", q: "a", status: "ok" }
]

for (const backend of backends) {
  describe(`agent analytics on ${backend}`, () => {
    let app: TestApp
    let t: Tenant
    let other: Tenant

    const get = (path: string, key = t.key) => app.fetch(path, { headers: bearer(key) })
    const pages = async (params: Record<string, string | number | undefined>, key = t.key, slug = t.brandSlug) => {
      const response = await get(`/api/public/v1/brands/${slug}/agents/pages${query(params)}`, key)
      expect(response.status).toBe(200)
      return (await response.json()) as PagesBody
    }
    const dashboard = async (params: Record<string, string | undefined>) => {
      const response = await get(`/api/public/v1/brands/${t.brandSlug}/agents${query(params)}`)
      expect(response.status).toBe(200)
      return (await response.json()) as Dashboard
    }

    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      t = await tenant(app, "growth")
      other = await tenant(app, "growth")
      const sent = await postBatch(app, t.key, { site_id: t.siteId, records: [...HITS, ...VISITS].map(toRecord) })
      expect(sent.status).toBe(200)
      expect(((await sent.json()) as { accepted: number }).accepted).toBe(HITS.length)
      // Another account's traffic on the same paths: never counted for t.
      const noise = await postBatch(app, other.key, {
        site_id: other.siteId,
        records: [...HITS, ...HITS].map((hit, i) => ({ ...toRecord(hit), path: i % 2 === 0 ? hit.path : "/other-only" }))
      })
      expect(noise.status).toBe(200)
    }, 60_000)
    afterAll(() => app.dispose())

    it("the fixtures' User-Agents are classified as the fixtures say", () => {
      const classify = makeClassifier(loadCatalog().agents)
      for (const [ua, agent] of Object.entries(AGENT)) expect(classify(ua)).toEqual(agent as never)
      expect(classify(UA.chrome)).toBeNull()
    })

    describe("GET /brands/{slug}/agents/pages", () => {
      it("lists every crawled URL, robots.txt, llms.txt and assets included, with the documented fields", async () => {
        const body = await pages({ range: "7d" })
        expect(body.pages.map((p) => p.path)).toEqual(["/docs/a", "/blog/x", "/pricing", "/", "/assets/app.js", "/docs/b", "/llms.txt", "/robots.txt"])
        expect(body.pages[0]).toEqual({
          path: "/docs/a",
          hits: 3,
          errors: 1,
          uniques: 2,
          bots: ["ClaudeBot", "GPTBot"],
          last_seen: "2026-05-20T00:30:00.000Z"
        })
        expect(body.pages.find((p) => p.path === "/pricing")).toMatchObject({ hits: 2, errors: 0, uniques: 1, bots: ["ChatGPT-User"] })
        expect(body).toMatchObject({ total: 8, limit: 100, offset: 0 })
      })

      it("defaults: range 30d, sort hits descending, ties by path", async () => {
        expect((await pages({})).pages).toEqual(expectedPages({ range: "30d" }))
        expect(await pages({})).toEqual(await pages({ range: "30d", sort: "hits", dir: "desc", limit: 100, offset: 0 }))
      })

      for (const range of ["7d", "30d", "90d"] as const) {
        it(`every filter x status/folder/q x sort combination at ${range} matches the reference`, async () => {
          for (const filter of FILTERS) {
            for (const narrowing of NARROWING) {
              for (const sort of SORTS) {
                const params = { range, ...filter, ...narrowing, ...sort }
                const body = await pages(params)
                const expected = expectedPages(params)
                expect({ params, pages: body.pages, total: body.total }).toEqual({ params, pages: expected, total: expected.length })
              }
            }
          }
        }, 120_000)
      }

      it("paging walks the whole list without gaps or repeats, for every sort", async () => {
        for (const sort of SORTS) {
          const all = expectedPages({ range: "90d", ...sort })
          for (const limit of [1, 2, 3]) {
            const seen: Array<Page> = []
            for (let offset = 0; offset < all.length + limit; offset += limit) {
              const body = await pages({ range: "90d", ...sort, limit, offset })
              expect(body.total).toBe(all.length)
              expect(body.pages.length).toBe(Math.max(0, Math.min(limit, all.length - offset)))
              seen.push(...body.pages)
            }
            expect(seen).toEqual(all)
            expect(new Set(seen.map((p) => p.path)).size).toBe(all.length)
          }
        }
      }, 120_000)

      it("an offset past the end answers no rows and the true total", async () => {
        const body = await pages({ range: "90d", offset: 1000 })
        expect(body.pages).toEqual([])
        expect(body.total).toBe(expectedPages({ range: "90d" }).length)
        const none = await pages({ range: "90d", bot: "NoSuchBot", offset: 5 })
        expect(none).toMatchObject({ pages: [], total: 0, offset: 5 })
      })

      it("limit 500 is allowed", async () => {
        expect((await pages({ limit: 500 })).limit).toBe(500)
      })

      const bad: ReadonlyArray<[string, string]> = [
        ["range=1d", "invalid range: must be one of 7d, 30d, 90d"],
        ["kind=robot", "invalid kind: must be one of training_crawler, search_crawler, browsing_agent, agentic_browser, mcp_client"],
        ["dir=up", "invalid dir: must be asc or desc"],
        ["dir=up&sort=hits", "invalid dir: must be asc or desc"],
        ["status=abc", "invalid status: must be ok, error or a 3-digit status code"],
        ["status=99", "invalid status: must be ok, error or a 3-digit status code"],
        ["status=OK", "invalid status: must be ok, error or a 3-digit status code"],
        ["limit=0", "invalid limit: must be an integer between 1 and 500"],
        ["limit=501", "invalid limit: must be an integer between 1 and 500"],
        ["limit=1.5", "invalid limit: must be an integer between 1 and 500"],
        ["limit=x", "invalid limit: must be an integer between 1 and 500"],
        ["offset=-1", "invalid offset: must be an integer >= 0"],
        ["offset=y", "invalid offset: must be an integer >= 0"],
        ["folder=docs/api", "invalid folder: must be one top-level folder name, or / for pages at the site root"]
      ]
      for (const [params, error] of bad) {
        it(`400 for ${params}`, async () => {
          const response = await get(`/api/public/v1/brands/${t.brandSlug}/agents/pages?${params}`)
          expect(response.status).toBe(400)
          expect(await json(response)).toEqual({ error })
        })
      }

      it("an unknown sort falls back to hits, with no error", async () => {
        expect((await pages({ sort: "nonsense" })).pages).toEqual((await pages({ sort: "hits" })).pages)
      })
    })

    describe("GET /brands/{slug}/agents", () => {
      it("answers the documented shape with the known figures", async () => {
        const body = await dashboard({ range: "7d" })
        expect(body.range).toBe("7d")
        expect(body.filters).toEqual({ bot: null, vendor: null, kind: null })
        expect(body.kpis).toEqual({ hits: 12, pages: 8, bots: 5, error_rate: 2 / 12 })
        expect(body.trend.map((p) => p.date)).toEqual(
          ["2026-05-14", "2026-05-15", "2026-05-16", "2026-05-17", "2026-05-18", "2026-05-19", "2026-05-20"]
        )
        expect(body.trend.at(-1)).toEqual({
          date: "2026-05-20",
          hits: 8,
          by_kind: { browsing_agent: 1, search_crawler: 2, training_crawler: 5 }
        })
        expect(body.breakdowns.by_bot[0]).toEqual({ bot: "GPTBot", vendor: "OpenAI", kind: "training_crawler", hits: 4 })
        expect(body.breakdowns.by_vendor).toEqual([
          { vendor: "OpenAI", hits: 7 },
          { vendor: "Anthropic", hits: 3 },
          { vendor: "Perplexity", hits: 2 }
        ])
        expect(body.breakdowns.by_status).toEqual([
          { status: 200, hits: 7 },
          { status: 301, hits: 1 },
          { status: 304, hits: 1 },
          { status: 404, hits: 1 },
          { status: 500, hits: 1 },
          { status: null, hits: 1 }
        ].sort((a, b) => b.hits - a.hits || (a.status ?? 1000) - (b.status ?? 1000)))
        expect(body.top_pages).toEqual(expectedPages({ range: "7d" }).slice(0, 10))
        expect(body.tag.site_id).toBe(t.siteId)
        expect(body.tag.snippet).toBe(`<script async src="http://localhost/tag.js?site_id=${t.siteId}"></script>`)
      })

      for (const range of ["7d", "30d", "90d"] as const) {
        it(`KPIs, trend, breakdowns and the pages list add up for every filter at ${range}`, async () => {
          for (const filter of FILTERS) {
            const params = { range, ...filter }
            const body = await dashboard(params as Record<string, string>)
            const hits = matchingHits(params)
            const sum = (rows: ReadonlyArray<{ hits: number }>) => rows.reduce((n, r) => n + r.hits, 0)
            expect(body.kpis.hits).toBe(hits.length)
            expect(sum(body.trend)).toBe(hits.length)
            expect(body.trend.reduce((n, p) => n + Object.values(p.by_kind).reduce((a, b) => a + b, 0), 0)).toBe(hits.length)
            expect(sum(body.breakdowns.by_bot)).toBe(hits.length)
            expect(sum(body.breakdowns.by_vendor)).toBe(hits.length)
            expect(sum(body.breakdowns.by_kind)).toBe(hits.length)
            expect(sum(body.breakdowns.by_status)).toBe(hits.length)
            expect(body.kpis.bots).toBe(body.breakdowns.by_bot.length)
            const list = await pages({ ...params, limit: 500 })
            expect(body.kpis.pages).toBe(list.total)
            expect(sum(list.pages)).toBe(hits.length)
            const errors = list.pages.reduce((n, p) => n + p.errors, 0)
            expect(body.kpis.error_rate).toBeCloseTo(hits.length === 0 ? 0 : errors / hits.length, 12)
            expect(sum(body.breakdowns.by_status.filter((s) => s.status !== null && s.status >= 400))).toBe(errors)
            expect(body.top_pages).toEqual(list.pages.slice(0, 10))
            expect(body.filters).toEqual({ bot: filter.bot ?? null, vendor: filter.vendor ?? null, kind: filter.kind ?? null })
            for (const bot of body.breakdowns.by_bot) {
              if (filter.bot !== undefined) expect(bot.bot).toBe(filter.bot)
              if (filter.vendor !== undefined) expect(bot.vendor).toBe(filter.vendor)
              if (filter.kind !== undefined) expect(bot.kind).toBe(filter.kind)
            }
          }
        }, 60_000)
      }

      it("400 for a bad range or kind", async () => {
        for (const params of ["range=30", "kind=crawler"]) {
          const response = await get(`/api/public/v1/brands/${t.brandSlug}/agents?${params}`)
          expect(response.status).toBe(400)
        }
      })

      it("coverage_from is the first day the rollup holds (or the brand's creation); retention_limited when the range starts before it", async () => {
        // The brand was created today (real time) but holds backfilled hits from 95 days ago.
        const body = await dashboard({ range: "90d" })
        expect(body.coverage_from).toBe("2026-02-14")
        expect(body.retention_limited).toBe(false)
        const fresh = await dashboard({ range: "7d" })
        expect(fresh.retention_limited).toBe(false)
      })
    })

    describe("GET /brands/{slug}/search-performance and /attribution", () => {
      it("search-performance: the funnel per day and engine, and top pages of each stage", async () => {
        const response = await get(`/api/public/v1/brands/${t.brandSlug}/search-performance?range=7d`)
        expect(response.status).toBe(200)
        const body = (await response.json()) as any
        expect(body).toMatchObject({ brand_slug: t.brandSlug, range: "7d", from: "2026-05-14", to: "2026-05-20" })
        // search_crawler: PerplexityBot /llms.txt, OAI-SearchBot /docs/b today, PerplexityBot / 3 days ago;
        // browsing_agent: ChatGPT-User /pricing today and yesterday; referrals: chatgpt today, perplexity 2 days ago.
        expect(body.totals).toEqual({ search_crawls: 3, agent_fetches: 2, referrals: 2 })
        expect(body.trend).toHaveLength(7)
        expect(body.trend.at(-1)).toEqual({
          date: "2026-05-20",
          search_crawls: 2,
          agent_fetches: 1,
          referrals: 1,
          by_engine: {
            chatgpt: { search_crawls: 1, agent_fetches: 1, referrals: 1 },
            perplexity: { search_crawls: 1, agent_fetches: 0, referrals: 0 }
          }
        })
        expect(body.engines).toEqual([
          { engine: "chatgpt", search_crawls: 1, agent_fetches: 2, referrals: 1 },
          { engine: "perplexity", search_crawls: 2, agent_fetches: 0, referrals: 1 }
        ])
        expect(body.top_pages).toEqual({
          search_crawls: [{ path: "/", count: 1 }, { path: "/docs/b", count: 1 }, { path: "/llms.txt", count: 1 }],
          agent_fetches: [{ path: "/pricing", count: 2 }],
          referrals: [{ path: "/docs/a", count: 1 }, { path: "/pricing", count: 1 }]
        })
        expect(body.retention_limited).toBe(false)
      })

      it("attribution: referrals by engine and landing page, crawl-to-referral ratio per vendor", async () => {
        const response = await get(`/api/public/v1/brands/${t.brandSlug}/attribution?range=90d`)
        expect(response.status).toBe(200)
        const body = (await response.json()) as any
        expect(body.total_referrals).toBe(3)
        expect(body.trend).toHaveLength(90)
        expect(body.trend.reduce((n: number, d: { referrals: number }) => n + d.referrals, 0)).toBe(3)
        expect(body.engines).toEqual([
          { engine: "chatgpt", referrals: 2, share: 2 / 3 },
          { engine: "perplexity", referrals: 1, share: 1 / 3 }
        ])
        expect(body.landing_pages).toEqual([
          { path: "/pricing", referrals: 2, by_engine: { chatgpt: 2 } },
          { path: "/docs/a", referrals: 1, by_engine: { perplexity: 1 } }
        ])
        const hits90 = matchingHits({ range: "90d" })
        const ofVendor = (v: string) => hits90.filter((hit) => AGENT[hit.ua]!.vendor === v).length
        expect(body.vendors).toEqual([
          { vendor: "OpenAI", engines: ["chatgpt"], crawler_hits: ofVendor("OpenAI"), referrals: 2, crawl_to_referral_ratio: ofVendor("OpenAI") / 2 },
          { vendor: "Anthropic", engines: ["claude"], crawler_hits: ofVendor("Anthropic"), referrals: 0, crawl_to_referral_ratio: null },
          { vendor: "Perplexity", engines: ["perplexity"], crawler_hits: ofVendor("Perplexity"), referrals: 1, crawl_to_referral_ratio: ofVendor("Perplexity") }
        ].sort((a, b) => b.crawler_hits - a.crawler_hits || b.referrals - a.referrals || a.vendor.localeCompare(b.vendor)))
        const week = (await (await get(`/api/public/v1/brands/${t.brandSlug}/attribution`)).json()) as any
        expect(week.range).toBe("30d")
        expect(week.total_referrals).toBe(2)
      })

      it("400 for a bad range", async () => {
        for (const path of ["search-performance", "attribution"]) {
          expect((await get(`/api/public/v1/brands/${t.brandSlug}/${path}?range=2w`)).status).toBe(400)
        }
      })
    })

    describe("isolation", () => {
      it("another account's key gets 404 brand not found on all four endpoints", async () => {
        for (const suffix of ["/agents", "/agents/pages", "/search-performance", "/attribution"]) {
          const response = await get(`/api/public/v1/brands/${t.brandSlug}${suffix}`, other.key)
          expect(response.status).toBe(404)
          expect(await response.text()).toBe(`{"error":"brand not found"}`)
        }
      })

      it("the other account sees only its own traffic", async () => {
        const body = await pages({ range: "90d", limit: 500 }, other.key, other.brandSlug)
        expect(body.pages.some((p) => p.path === "/other-only")).toBe(true)
        expect(body.pages.reduce((n, p) => n + p.hits, 0)).toBe(2 * matchingHits({ range: "90d" }).length)
      })
    })

    if (backend !== "fake") {
      describe("rollups", () => {
        it("ingestion writes the per-(day, path, bot, status) rollup, with last_seen, and the daily rollup", async () => {
          // As a read sees them (folded or queued), then in the rollup tables once the aggregator folded them.
          for (const [rollup, daily] of [["crawler_rollup_exact", "crawler_daily_exact"], ["crawler_rollup", "crawler_daily"]] as const) {
            if (rollup === "crawler_rollup") await folded(app)
            const rows = await sqlQuery<{ hits: number; last: string }>(
              app,
              `select r.hits, r.last_seen as last from ${rollup} r join brands b on b.id = r.brand_id
               where b.slug = $1 and r.path = '/docs/a' and r.bot = 'GPTBot' and r.day = '2026-05-20'`,
              [t.brandSlug]
            )
            expect(rows.map((r) => ({ hits: r.hits, last: new Date(r.last).toISOString() }))).toEqual([
              { hits: 2, last: "2026-05-20T00:20:00.000Z" }
            ])
            const sum = await sqlQuery<{ n: number }>(
              app,
              `select sum(d.hits)::int as n from ${daily} d join brands b on b.id = d.brand_id where b.slug = $1`,
              [t.brandSlug]
            )
            expect(sum[0]!.n).toBe(HITS.length)
          }
        })

        it("hits arriving after the spans were built are counted at once; a stale span is rebuilt on read", async () => {
          await pages({ range: "7d" }) // spans exist now
          const extra = [{ ua: UA.gptbot, path: "/late", ts: NOW.getTime() - 3_600_000, status: 200 }]
          const sent = await postBatch(app, t.key, { site_id: t.siteId, records: extra })
          expect(sent.status).toBe(200)
          const late = { daysAgo: 0, minute: 660, ua: UA.gptbot, path: "/late", status: 200 }
          const all = [...HITS, late]
          for (const range of ["7d", "30d", "90d"] as const) {
            expect((await pages({ range })).pages).toEqual(expectedPages({ range }, all))
            expect((await pages({ range, status: "ok" })).pages).toEqual(expectedPages({ range, status: "ok" }, all))
          }
          await sqlQuery(app, `update crawler_span_state set as_of = as_of - 1`)
          await sqlQuery(app, `update crawler_span set hits_7 = hits_7 + 1000, hits_30 = hits_30 + 1000, hits_90 = hits_90 + 1000`) // garbage a rebuild must replace
          for (const range of ["7d", "30d", "90d"] as const) {
            expect((await pages({ range })).pages).toEqual(expectedPages({ range }, all))
          }
          // Clean up for the other tests: the extra hit leaves the fixtures' answers otherwise unchanged only without it.
          await folded(app)
          await sqlQuery(app, `delete from crawler_hits where path = '/late'`)
          await sqlQuery(app, `delete from crawler_rollup where path = '/late'`)
          await sqlQuery(app, `delete from crawler_span where path = '/late'`)
          await sqlQuery(app, `update crawler_daily set hits = hits - 1 where bot = 'GPTBot' and day = '2026-05-20' and status = 200
                               and brand_id = (select id from brands where slug = $1)`, [t.brandSlug])
        })
      })
    }
  })
}
