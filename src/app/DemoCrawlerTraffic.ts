import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { findAgent } from "../catalog/Classifier.js"
import { DAY_MS, startOfDayMs } from "../platform/Days.js"
import { HitsRepo, type HitRow, type ReferralRow } from "../ingestion/HitsRepo.js"

/**
 * Crawler traffic and AI referrals of the demo brands (`bun run cli demo`): every agent
 * endpoint shows data for a newcomer. Deterministic (a PRNG seeded by the slug), stored through the
 * ingestion statement (HitsRepo: hits, rollups, referrals) with channel `api`; a rerun replaces it.
 *
 * Made so for the demo's actions (docs/actions.md), each kind shows at least once: /old-page always
 * answers 404 (a removed page crawlers still fetch), the first brand's site has no /llms.txt (404), and a
 * share of the "GPTBot" hits come from an address outside OpenAI's ranges (a documentation range,
 * 203.0.113.0/24), so they are stored as spoofed.
 */

/** Demo data made so (above): the statuses of two paths, and the share of GPTBot hits that are spoofed. */
const DEMO_ACTIONS = { removedPath: "/old-page", llmsTxt: "/llms.txt", spoofedBot: "GPTBot", spoofedShare: 0.3, spoofedIp: "203.0.113.7" } as const


/**
 * Lets the timers and I/O waiting in the event loop run (a macrotask turn), then goes on: on the
 * embedded database every query resolves in microtasks, so a background fill that never yields would
 * starve the server's requests (DEMO=1 fills while it serves).
 */
export const yieldToEventLoop = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Bots the demo site sees (catalog names) and their relative weights. */
const DEMO_BOTS: ReadonlyArray<readonly [string, number]> = [
  ["GPTBot", 22],
  ["ClaudeBot", 16],
  ["OAI-SearchBot", 10],
  ["PerplexityBot", 9],
  ["ChatGPT-User", 9],
  ["Claude-SearchBot", 5],
  ["Perplexity-User", 5],
  ["Claude-User", 4],
  ["Google-CloudVertexBot", 3],
  ["Gemini-Deep-Research", 2],
  ["ChatGPT Agent", 2],
  ["AzureAI-SearchBot", 2],
  ["DeepSeekBot", 2],
  ["OpenAI MCP connector", 1]
]

const STATUSES: ReadonlyArray<readonly [number | null, number]> = [
  [200, 80], [304, 6], [301, 4], [404, 6], [500, 2], [503, 1], [null, 1]
]

const REFERRERS: ReadonlyArray<readonly [string, string, number]> = [
  ["chatgpt", "https://chatgpt.com/", 45],
  ["perplexity", "https://www.perplexity.ai/", 25],
  ["gemini", "https://gemini.google.com/", 12],
  ["copilot", "https://copilot.microsoft.com/", 8],
  ["claude", "https://claude.ai/", 7],
  ["grok", "https://grok.com/", 3]
]

const pathsOf = (slug: string): ReadonlyArray<string> => {
  const topics = slug.includes("crm")
    ? ["pipeline", "contacts", "email-sequences", "lead-scoring", "pricing-plans", "gmail", "slack", "api"]
    : ["hiking-boots", "rain-jackets", "tents", "trekking-poles", "repairs", "recycled-fabrics", "sale", "sizing"]
  return [
    "/", "/pricing", "/about", "/robots.txt", "/llms.txt", "/sitemap.xml", "/assets/app.js", "/assets/app.css",
    ...topics.map((t) => `/docs/${t}`),
    ...topics.map((t) => `/blog/${t}-guide`),
    ...topics.slice(0, 5).map((t) => `/compare/${t}`),
    "/old-page"
  ]
}

/** mulberry32 */
const prng = (seed: string) => {
  let a = [...seed].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 2654435761) >>> 0, 1779033703)
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const weighted = <A>(random: () => number, items: ReadonlyArray<readonly [A, number]>): A => {
  const total = items.reduce((n, [, w]) => n + w, 0)
  let r = random() * total
  for (const [item, w] of items) {
    r -= w
    if (r < 0) return item
  }
  return items[items.length - 1]![0]
}

export const seedCrawlerTraffic = (input: {
  readonly accountId: number
  readonly brands: ReadonlyArray<{ readonly id: number; readonly slug: string; readonly siteId: string; readonly domain: string }>
  readonly days: number
  readonly now: Date
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hitsRepo = yield* HitsRepo
    const at = input.now.getTime()
    const today = startOfDayMs(at)
    const bots = DEMO_BOTS.flatMap(([bot, w]) => {
      const agent = findAgent(bot)
      return agent === undefined ? [] : [[agent, w] as const]
    })
    for (const [index, brand] of input.brands.entries()) {
      // A rerun replaces the demo traffic of the brand.
      for (const table of ["crawler_hits", "crawler_fold_queue", "crawler_rollup", "crawler_daily", "crawler_span", "crawler_page_span", "crawler_span_state", "ai_referrals"]) {
        yield* sql`delete from ${sql(table)} where account_id = ${input.accountId} and brand_id = ${brand.id}`.pipe(Effect.orDie)
      }
      const random = prng(brand.slug)
      // Its own sequence, so the made-so data leaves the rest of the traffic as it was.
      const madeSo = prng(`${brand.slug}:actions`)
      const paths = pathsOf(brand.slug)
      const pathWeights = paths.map((p, i) => [p, p === "/old-page" ? 0.3 : 1 / (1 + i * 0.35)] as const)
      let hits: Array<HitRow> = []
      let referrals: Array<ReferralRow> = []
      const flush = Effect.suspend(() => {
        const batch = { hits, referrals }
        hits = []
        referrals = []
        return hitsRepo.store({
          accountId: input.accountId,
          brandId: brand.id,
          channel: "api",
          month: new Date(today).toISOString().slice(0, 8) + "01",
          hits: batch.hits,
          limit: batch.hits.length,
          cap: null,
          referrals: batch.referrals
        }).pipe(Effect.orDie)
      })
      for (let d = input.days - 1; d >= 0; d--) {
        const dayStart = today - d * DAY_MS
        const growth = 1 + (input.days - d) / input.days
        const count = Math.round((120 + random() * 80) * growth)
        for (let i = 0; i < count; i++) {
          const ts = Math.min(dayStart + Math.floor(random() * DAY_MS), at)
          const agent = weighted(random, bots)
          const path = weighted(random, pathWeights)
          const drawn = weighted(random, STATUSES)
          const status = path === DEMO_ACTIONS.removedPath || (index === 0 && path === DEMO_ACTIONS.llmsTxt) ? 404 : drawn
          const spoofed = agent.bot === DEMO_ACTIONS.spoofedBot && madeSo() < DEMO_ACTIONS.spoofedShare
          hits.push({
            key: `demo:${d}:${i}`,
            recordId: null,
            ts,
            method: "GET",
            host: `www.${brand.domain}`,
            path,
            query: "",
            ua: `${agent.bot}/1.0`,
            referrer: "",
            status,
            clientIp: spoofed ? DEMO_ACTIONS.spoofedIp : null,
            country: null,
            bot: agent.bot,
            vendor: agent.vendor,
            kind: agent.kind,
            ...(spoofed ? { verification: "spoofed" as const } : {})
          })
        }
        const visits = Math.round((8 + random() * 10) * growth)
        for (let i = 0; i < visits; i++) {
          const [engine, referrer] = weighted(random, REFERRERS.map(([e, r, w]) => [[e, r] as const, w] as const))
          referrals.push({
            key: `demo-ref:${d}:${i}`,
            recordId: null,
            ts: Math.min(dayStart + Math.floor(random() * DAY_MS), at),
            method: "GET",
            host: `www.${brand.domain}`,
            path: weighted(random, pathWeights.slice(0, 16)),
            query: "",
            ua: "Mozilla/5.0",
            referrer,
            status: 200,
            clientIp: null,
            country: null,
            engine
          })
        }
        if (hits.length >= 500) {
          yield* flush
          yield* yieldToEventLoop
        }
      }
      yield* flush
    }
  })
