import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { findAgent } from "../catalog/Classifier.js"
import { DAY_MS, startOfDayMs } from "../platform/Days.js"
import { mulberry32 } from "../platform/Random.js"
import { HitsRepo, type HitRow, type ReferralRow } from "../ingestion/HitsRepo.js"
import { Verification } from "../verification/Verification.js"

/**
 * Crawler traffic and AI referrals of the demo brands (`bun run cli demo`): every agent
 * endpoint shows data for a newcomer. Deterministic (a PRNG seeded by the slug), stored through the
 * ingestion statement (HitsRepo: hits, rollups, referrals) with channel `api`; a rerun replaces it.
 *
 * Every hit is judged by the real verifier (docs/verification.md), never given a verdict: a bot whose
 * operator publishes IP ranges (in the snapshot the server has loaded) mostly comes from an address
 * drawn inside those ranges (verified), a share of its hits claim its name from an address of the
 * documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24), which no operator publishes
 * (spoofed), and some arrive without a client IP (unverified, as behind a platform that hides it). A bot
 * with no published ranges comes without an address (unverified), and no bot that the verifier would
 * check by reverse DNS is sent from outside its ranges: the demo never waits on DNS.
 *
 * Made so for the demo's actions (docs/actions.md), each kind shows at least once: /old-page always
 * answers 404 (a removed page crawlers still fetch), the first brand's site has no /llms.txt (404), and
 * 30% of the "GPTBot" hits come from outside OpenAI's ranges, so the verifier stores them as spoofed.
 */

/** Demo data made so (above): the statuses of two paths. */
const DEMO_ACTIONS = { removedPath: "/old-page", llmsTxt: "/llms.txt" } as const

/** The share of each bot's hits sent from outside its operator's ranges (a spoofed claim); others: none. */
const SPOOFED_SHARES: Readonly<Record<string, number>> = {
  GPTBot: 0.3,
  PerplexityBot: 0.15,
  ClaudeBot: 0.08,
  "OAI-SearchBot": 0.05,
  "ChatGPT-User": 0.04
}
/** The share of hits of a bot with published ranges that arrive without a client IP. */
const HIDDEN_IP_SHARE = 0.1
/** Documentation ranges (RFC 5737): in no operator's published ranges. */
const OUTSIDE_PREFIXES = ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"] as const

/** An IPv4 prefix as its first address and size; null for IPv6 or malformed text. */
const ipv4Prefix = (cidr: string): { readonly base: number; readonly size: number } | null => {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim())
  if (match === null) return null
  const octets = match.slice(1, 5).map(Number)
  const bits = Number(match[5])
  if (octets.some((o) => o > 255) || bits > 32) return null
  const address = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0
  const size = 2 ** (32 - bits)
  return { base: address - (address % size), size }
}

/** A random address inside one of `prefixes`. */
const addressIn = (prefixes: ReadonlyArray<{ readonly base: number; readonly size: number }>, random: () => number) => {
  const prefix = prefixes[Math.floor(random() * prefixes.length)]!
  const n = prefix.base + Math.floor(random() * prefix.size)
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".")
}

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

/** mulberry32 seeded by a string's hash. */
const prng = (seed: string) => mulberry32([...seed].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 2654435761) >>> 0, 1779033703))

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
    const verification = yield* Verification
    const at = input.now.getTime()
    const today = startOfDayMs(at)
    const bots = DEMO_BOTS.flatMap(([bot, w]) => {
      const agent = findAgent(bot)
      return agent === undefined ? [] : [[agent, w] as const]
    })
    // Where each bot's hits come from: its operator's IPv4 ranges in the snapshot the verifier uses.
    const outside = OUTSIDE_PREFIXES.map(ipv4Prefix).filter((p) => p !== null)
    const sources = new Map(bots.map(([agent]) => {
      const inside = verification.rangesOf(agent.bot).map(ipv4Prefix).filter((p) => p !== null)
      // A spoofed claim only where the ranges alone decide: a reverse-DNS check would wait on DNS.
      const spoofable = inside.length > 0 && !verification.methodsOf(agent.bot).includes("reverse_dns")
      return [agent.bot, { inside, spoofedShare: spoofable ? SPOOFED_SHARES[agent.bot] ?? 0 : 0 }] as const
    }))
    for (const [index, brand] of input.brands.entries()) {
      // A rerun replaces the demo traffic of the brand.
      for (const table of ["crawler_hits", "crawler_fold_queue", "crawler_rollup", "crawler_daily", "crawler_span", "crawler_page_span", "crawler_span_state", "ai_referrals"]) {
        yield* sql`delete from ${sql(table)} where account_id = ${input.accountId} and brand_id = ${brand.id}`.pipe(Effect.orDie)
      }
      const random = prng(brand.slug)
      // Their own sequences, so the addresses leave the rest of the traffic as it was.
      const madeSo = prng(`${brand.slug}:actions`)
      const addresses = prng(`${brand.slug}:addresses`)
      const paths = pathsOf(brand.slug)
      const pathWeights = paths.map((p, i) => [p, p === "/old-page" ? 0.3 : 1 / (1 + i * 0.35)] as const)
      let hits: Array<HitRow> = []
      let referrals: Array<ReferralRow> = []
      const flush = Effect.gen(function*() {
        const batch = { hits, referrals }
        hits = []
        referrals = []
        // The verdicts as ingestion gives them (Ingestion.store): the real verifier over each hit.
        const verdicts = yield* verification.verdicts(batch.hits)
        batch.hits = batch.hits.map((hit, i) => ({ ...hit, ...verdicts[i] }))
        return yield* hitsRepo.store({
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
          const source = sources.get(agent.bot)!
          const spoofed = source.spoofedShare > 0 && madeSo() < source.spoofedShare
          const clientIp = spoofed
            ? addressIn(outside, addresses)
            : source.inside.length === 0 || addresses() < HIDDEN_IP_SHARE
            ? null
            : addressIn(source.inside, addresses)
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
            clientIp,
            country: null,
            bot: agent.bot,
            vendor: agent.vendor,
            kind: agent.kind
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
