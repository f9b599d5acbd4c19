import { Context, Effect, Layer, Schema } from "effect"
import { Brands, BrandsLive } from "../brands/Brands.js"
import { canonicalPathPart, splitPath } from "../ingestion/Records.js"
import type { BrandRow } from "../brands/Brands.js"
import { badRequest, type BadRequest, type NotFound } from "../platform/HttpErrors.js"
import { AgentKindLiteral, type Range, rangeDays, rangeOrDefault } from "../platform/Schemas.js"
import { addDays, dayList, isoDay, periodOf, startOfDayMs } from "../platform/Days.js"
import { now } from "../platform/Time.js"
import type { AgentPagesResponse, AgentsResponse, AttributionResponse, CrawledPage, PageBotsResponse, SearchPerformanceResponse } from "./Api.js"
import { PAGE_SORT_COLUMNS } from "./Api.js"
import { AgentsConfig } from "./Config.js"
import { VERDICTS } from "../verification/Verdict.js"
import { Verification, VerificationLive } from "../verification/Verification.js"
import {
  AgentsRepo,
  type CrawlerFilter,
  type PageSort,
  type PagesQuery,
  type StatusFilter
} from "./Repo.js"

/**
 * Agent analytics (docs/agents.md, docs/decisions.md):
 * parameters are checked and defaulted here, figures come from AgentsRepo's rollups.
 */

export interface CrawlerParams {
  readonly range?: Range | undefined
  readonly bot?: string | undefined
  readonly vendor?: string | undefined
  readonly kind?: string | undefined
  readonly verification?: string | undefined
}

export interface PageBotsParams extends CrawlerParams {
  readonly path: string
}

export interface PagesParams extends CrawlerParams {
  readonly folder?: string | undefined
  readonly sort?: string | undefined
  readonly dir?: "asc" | "desc" | undefined
  readonly status?: string | undefined
  readonly q?: string | undefined
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

type Dashboard = typeof AgentsResponse.Type
type PageBots = typeof PageBotsResponse.Type
type Pages = typeof AgentPagesResponse.Type
type SearchPerformance = typeof SearchPerformanceResponse.Type
type Attribution = typeof AttributionResponse.Type

/** A failing page of a range (docs/actions.md): its hits, its error hits by status and by bot. */
export interface ErrorPage {
  readonly path: string
  readonly hits: number
  readonly errors: number
  /** Error hits per status code (400..599), as text keys. */
  readonly statuses: Readonly<Record<string, number>>
  /** Bots of the error hits, by their error hits descending, then name. */
  readonly bots: ReadonlyArray<{ readonly bot: string; readonly hits: number }>
}

/** One path's hits in a range by status and by bot (statuses of unknown status left out of `statuses`). */
export interface PathStatuses {
  readonly hits: number
  readonly statuses: Readonly<Record<string, number>>
  /** Bots by hits descending, then name. */
  readonly bots: ReadonlyArray<{ readonly bot: string; readonly hits: number }>
}

export interface AgentsShape {
  readonly dashboard: (accountId: number, slug: string, params: CrawlerParams, publicBase: string) => Effect.Effect<Dashboard, NotFound>
  readonly pages: (accountId: number, slug: string, params: PagesParams) => Effect.Effect<Pages, NotFound | BadRequest>
  /** The bots that fetched one page, each with its hits by verdict (GET /agents/pages/bots). */
  readonly pageBots: (accountId: number, slug: string, params: PageBotsParams) => Effect.Effect<PageBots, NotFound | BadRequest>
  readonly searchPerformance: (accountId: number, slug: string, range: Range | undefined) => Effect.Effect<SearchPerformance, NotFound>
  readonly attribution: (accountId: number, slug: string, range: Range | undefined) => Effect.Effect<Attribution, NotFound>
  /**
   * Pages of the range with at least `minHits` crawler hits of which at least `minErrorPercent`% answered
   * 4xx/5xx, most error hits first, then path; at most `limit` (the figures of GET /agents/pages).
   */
  readonly errorPages: (
    accountId: number,
    slug: string,
    range: Range | undefined,
    rule: { readonly minHits: number; readonly minErrorPercent: number; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<ErrorPage>, NotFound>
  /** One exact stored path's hits of the range by status and by bot. */
  readonly pathStatuses: (accountId: number, slug: string, range: Range | undefined, path: string) => Effect.Effect<PathStatuses, NotFound>
  /** Per bot of the range: hits and spoofed hits (GET /agents's by_bot, unfiltered and with verification=spoofed). */
  readonly botVerdicts: (
    accountId: number,
    slug: string,
    range: Range | undefined
  ) => Effect.Effect<ReadonlyArray<{ readonly bot: string; readonly hits: number; readonly spoofed: number }>, NotFound>
}

export class Agents extends Context.Tag("Agents")<Agents, AgentsShape>() {}

export const DEFAULT_PAGE_LIMIT = 100
export const TOP_PAGES = 10
export const MAX_LANDING_PAGES = 100

/** Answer engines of each crawler vendor (the first is the engine its crawler hits count for). */
export const VENDOR_ENGINES: Readonly<Record<string, ReadonlyArray<string>>> = {
  OpenAI: ["chatgpt"],
  Perplexity: ["perplexity"],
  Google: ["gemini", "ai_overview", "ai_mode"],
  Anthropic: ["claude"],
  Microsoft: ["copilot"],
  xAI: ["grok"],
  DeepSeek: ["deepseek"]
}
export const ENGINE_VENDOR: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(VENDOR_ENGINES).flatMap(([vendor, engines]) => engines.map((engine) => [engine, vendor]))
)

/** The days of a range ending today (UTC): its bounds and every day, oldest first. */
interface RangeWindow {
  readonly days: number
  readonly from: string
  readonly to: string
  readonly list: ReadonlyArray<string>
}

/** Today's windows, by range: every read of a day asks for the same few (a day's list is 7 to 90 dates made). */
let windowsOfDay: { readonly day: number; readonly byRange: Map<Range, RangeWindow> } = { day: NaN, byRange: new Map() }

const rangeWindow = (at: Date, range: Range): RangeWindow => {
  const day = startOfDayMs(at.getTime())
  if (windowsOfDay.day !== day) windowsOfDay = { day, byRange: new Map() }
  const known = windowsOfDay.byRange.get(range)
  if (known !== undefined) return known
  const days = rangeDays(range)
  const { from, to } = periodOf(at, days)
  const window = { days, from, to, list: dayList(from, days) }
  windowsOfDay.byRange.set(range, window)
  return window
}

const nonEmpty = (s: string | undefined) => (s === undefined || s.trim() === "" ? null : s.trim())
/**
 * The pages search (`q`) in the stored paths' form: paths are stored with canonical escapes, so a
 * search typed decoded ("café") or escaped in any case finds them; lower-cased first, the search being
 * case-insensitive.
 */
const searchOf = (q: string | undefined) => {
  const text = nonEmpty(q)
  return text === null ? null : canonicalPathPart(text.toLowerCase())
}

const filterOf = (params: CrawlerParams): CrawlerFilter => ({
  bot: nonEmpty(params.bot),
  vendor: nonEmpty(params.vendor),
  kind: nonEmpty(params.kind),
  verification: nonEmpty(params.verification)
})

/** "docs", "/docs", "docs/" -> "docs"; "/" -> "/"; "" -> null; "a/b" is not a top-level folder. */
export const parseFolder = (raw: string | undefined): string | null | BadRequest => {
  if (raw === undefined || raw.trim() === "") return null
  const trimmed = raw.trim()
  const name = trimmed.replace(/^\/+/, "").replace(/\/+$/, "")
  if (name === "") return "/"
  if (name.includes("/")) return badRequest("invalid folder: must be one top-level folder name, or / for pages at the site root")
  return name
}

export const parseStatus = (raw: string | undefined): StatusFilter | null =>
  raw === undefined || raw === "" ? null : raw === "ok" || raw === "error" ? { _tag: raw } : { _tag: "code", code: Number(raw) }

/** Unknown sort values fall back to hits; dir is honoured only alongside sort (docs/agents.md). */
export const parseSort = (sort: string | undefined, dir: "asc" | "desc" | undefined): { sort: PageSort; dir: "asc" | "desc" } => {
  const key = PAGE_SORT_COLUMNS.find((column) => column === sort) ?? "hits"
  const fallback = key === "path" ? "asc" : "desc"
  return { sort: key, dir: sort === undefined ? fallback : dir ?? fallback }
}

const byHitsThen = <A extends { hits: number }>(name: (a: A) => string) => (a: A, b: A) =>
  b.hits - a.hits || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0)

/** A kind filter as the answers echo it: one of the kinds, or null (other values filter nothing). */
const kindFilter = (kind: string | null): AgentKind | null => (Schema.is(AgentKindLiteral)(kind) ? kind : null)

/** A stored kind (the rollups hold the classifier's kinds only): one that is not is a defect, as a row breaking its Schema. */
const storedKind: (kind: string) => AgentKind = Schema.decodeUnknownSync(AgentKindLiteral)

type AgentKind = typeof AgentKindLiteral.Type

const sumInto = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n)

/** A crawled page in its wire form (CrawledPage's Encoded), its keys in the schema's order. */
export const crawledPageWire = (row: typeof CrawledPage.Type): typeof CrawledPage.Encoded => ({
  path: row.path,
  hits: row.hits,
  errors: row.errors,
  uniques: row.uniques,
  bots: row.bots,
  last_seen: row.last_seen.toISOString()
})

/** The pages list in its wire form (AgentPagesResponse's Encoded), its keys in the schema's order. */
export const pagesWire = (pages: Pages): typeof AgentPagesResponse.Encoded => ({
  pages: pages.pages.map(crawledPageWire),
  total: pages.total,
  limit: pages.limit,
  offset: pages.offset,
  retention_limited: pages.retention_limited,
  coverage_from: pages.coverage_from
})

/**
 * The dashboard in its wire form (AgentsResponse's Encoded), its keys in the schema's order: only the
 * top pages' times differ from the value the service builds (already in the schema's order).
 */
export const dashboardWire = (dashboard: Dashboard): typeof AgentsResponse.Encoded => ({
  range: dashboard.range,
  filters: dashboard.filters,
  kpis: dashboard.kpis,
  trend: dashboard.trend,
  breakdowns: dashboard.breakdowns,
  top_pages: dashboard.top_pages.map(crawledPageWire),
  tag: dashboard.tag,
  retention_limited: dashboard.retention_limited,
  coverage_from: dashboard.coverage_from,
  ranges_snapshot: dashboard.ranges_snapshot
})

export const tagSnippet = (publicBase: string, siteId: string) =>
  `<script async src="${publicBase}/tag.js?site_id=${siteId}"></script>`

export const AgentsLive = Layer.effect(
  Agents,
  Effect.gen(function*() {
    const brands = yield* Brands
    const repo = yield* AgentsRepo
    const config = yield* AgentsConfig
    const verification = yield* Verification

    /**
     * coverage_from = the first day the rollup is complete for the brand (docs/agents.md). A pages read
     * answered in one statement brought the first rollup day along (`known`); otherwise it is read.
     */
    const coverage = (brand: BrandRow, from: string, today: string, known?: string | null) =>
      Effect.map(known === undefined ? repo.firstRollupDay(brand.accountId, brand.id) : Effect.succeed(known), (first) => {
        const created = isoDay(brand.addedAt)
        const start = first !== null && first < created ? first : created
        const horizon = addDays(today, -(config.rollupRetentionDays - 1))
        const coverageFrom = start > horizon ? start : horizon
        return { coverage_from: coverageFrom, retention_limited: from < coverageFrom }
      })

    const context = (accountId: number, slug: string, range: Range | undefined) =>
      Effect.gen(function*() {
        const brand = yield* brands.row(accountId, slug)
        const r = rangeOrDefault(range)
        const window = rangeWindow(yield* now, r)
        return { brand, range: r, window }
      })

    const pagesOf = (brand: BrandRow, window: RangeWindow, query: Omit<PagesQuery, "from" | "to" | "days">) =>
      repo.pages(brand.accountId, brand.id, { ...query, from: window.from, to: window.to, days: window.days })

    /** The TOP_PAGES most crawled paths of the window, under a crawler filter. */
    const topPagesOf = (brand: BrandRow, window: RangeWindow, filter: CrawlerFilter) =>
      pagesOf(brand, window, {
        filter,
        folder: null,
        q: null,
        status: null,
        sort: "hits",
        dir: "desc",
        limit: TOP_PAGES,
        offset: 0
      })

    const dashboard: AgentsShape["dashboard"] = (accountId, slug, params, publicBase) =>
      Effect.gen(function*() {
        const { brand, range, window } = yield* context(accountId, slug, params.range)
        const filter = filterOf(params)
        // One after the other: two fibers joined cost the server more CPU than the second statement's
        // round trip costs in time (a join diffs the request's whole context; docs/performance.md).
        const [figures, top] = yield* Effect.all([
          repo.dashboardFigures(accountId, brand.id, window.from, window.to, filter),
          topPagesOf(brand, window, filter)
        ])
        const cover = yield* coverage(brand, window.from, window.to, top.firstRollupDay)
        const perDay = new Map<string, { hits: number; byKind: Map<string, number> }>()
        figures.trend_day.forEach((date, i) => {
          const n = figures.trend_hits[i]!
          const day = perDay.get(date) ?? { hits: 0, byKind: new Map() }
          day.hits += n
          day.byKind.set(figures.trend_kind[i]!, n)
          perDay.set(date, day)
        })
        let hits = 0
        let errors = 0
        const bots = new Map<string, { bot: string; vendor: string; kind: AgentKind; hits: number }>()
        const vendors = new Map<string, number>()
        const kinds = new Map<string, number>()
        const statuses = new Map<number | null, number>()
        const verdicts = new Map<string, number>()
        figures.bot.forEach((name, i) => {
          const n = figures.hits[i]!
          const status = figures.status[i]!
          hits += n
          if (status !== null && status >= 400) errors += n
          const bot = bots.get(name) ?? { bot: name, vendor: figures.vendor[i]!, kind: storedKind(figures.kind[i]!), hits: 0 }
          bot.hits += n
          bots.set(name, bot)
          sumInto(vendors, figures.vendor[i]!, n)
          sumInto(kinds, figures.kind[i]!, n)
          statuses.set(status, (statuses.get(status) ?? 0) + n)
          sumInto(verdicts, figures.verification[i]!, n)
        })
        return {
          range,
          filters: { bot: filter.bot, vendor: filter.vendor, kind: kindFilter(filter.kind) },
          kpis: { hits, pages: top.total, bots: bots.size, error_rate: hits === 0 ? 0 : errors / hits },
          trend: window.list.map((date) => {
            const day = perDay.get(date)
            return { date, hits: day?.hits ?? 0, by_kind: Object.fromEntries([...(day?.byKind ?? [])].sort(([a], [b]) => (a < b ? -1 : 1))) }
          }),
          breakdowns: {
            by_bot: [...bots.values()].sort(byHitsThen((b) => b.bot)),
            by_vendor: [...vendors].map(([vendor, n]) => ({ vendor, hits: n })).sort(byHitsThen((v) => v.vendor)),
            by_kind: [...kinds].map(([kind, n]) => ({ kind: storedKind(kind), hits: n })).sort(byHitsThen((k) => k.kind)),
            by_status: [...statuses].map(([status, n]) => ({ status, hits: n })).sort((a, b) =>
              b.hits - a.hits || (a.status ?? 1000) - (b.status ?? 1000)
            ),
            by_verification: VERDICTS.map((verification) => ({ verification, hits: verdicts.get(verification) ?? 0 }))
          },
          top_pages: top.rows,
          tag: { site_id: brand.siteId, snippet: tagSnippet(publicBase, brand.siteId) },
          ...cover,
          ranges_snapshot: verification.snapshot().date
        } satisfies Dashboard
      })

    const pages: AgentsShape["pages"] = (accountId, slug, params) =>
      Effect.gen(function*() {
        const folder = parseFolder(params.folder)
        if (typeof folder === "object" && folder !== null) return yield* Effect.fail(folder)
        const { brand, window } = yield* context(accountId, slug, params.range)
        const limit = params.limit ?? DEFAULT_PAGE_LIMIT
        const offset = params.offset ?? 0
        const result = yield* pagesOf(brand, window, {
          filter: filterOf(params),
          folder,
          q: searchOf(params.q),
          status: parseStatus(params.status),
          ...parseSort(params.sort, params.dir),
          limit,
          offset
        })
        const cover = yield* coverage(brand, window.from, window.to, result.firstRollupDay)
        return { pages: result.rows, total: result.total, limit, offset, ...cover } satisfies Pages
      })

    const pageBots: AgentsShape["pageBots"] = (accountId, slug, params) =>
      Effect.gen(function*() {
        // The stored form of the path (as ingestion writes it): a query string or a full URL is cut to its path.
        if (params.path.trim() === "") return yield* Effect.fail(badRequest("invalid path: must be a path such as /pricing"))
        const path = splitPath(params.path).path
        const { brand, range, window } = yield* context(accountId, slug, params.range)
        const filter = filterOf(params)
        const [rows, cover] = yield* Effect.all([
          repo.pageBotVerdicts(accountId, brand.id, window.from, window.to, path, filter),
          coverage(brand, window.from, window.to)
        ], { concurrency: "unbounded" })
        type Bot = { bot: string; vendor: string; kind: AgentKind; hits: number; errors: number; verdicts: Map<string, number>; last: Date }
        const bots = new Map<string, Bot>()
        const verdicts = new Map<string, number>()
        let hits = 0
        let errors = 0
        let last: Date | null = null
        for (const row of rows) {
          const bot = bots.get(row.bot) ??
            { bot: row.bot, vendor: row.vendor, kind: storedKind(row.kind), hits: 0, errors: 0, verdicts: new Map(), last: row.last_seen }
          bot.hits += row.hits
          bot.errors += row.errors
          sumInto(bot.verdicts, row.verification, row.hits)
          if (row.last_seen > bot.last) bot.last = row.last_seen
          bots.set(row.bot, bot)
          sumInto(verdicts, row.verification, row.hits)
          hits += row.hits
          errors += row.errors
          if (last === null || row.last_seen > last) last = row.last_seen
        }
        const kind = kindFilter(filter.kind)
        const verdictFilter = VERDICTS.find((v) => v === filter.verification) ?? null
        return {
          brand_slug: brand.slug,
          range,
          path,
          filters: { bot: filter.bot, vendor: filter.vendor, kind, verification: verdictFilter },
          hits,
          errors,
          last_seen: last,
          by_verification: VERDICTS.map((v) => ({ verification: v, hits: verdicts.get(v) ?? 0 })),
          bots: [...bots.values()].sort(byHitsThen((b) => b.bot)).map((b) => ({
            bot: b.bot,
            vendor: b.vendor,
            kind: b.kind,
            hits: b.hits,
            errors: b.errors,
            verified: b.verdicts.get("verified") ?? 0,
            spoofed: b.verdicts.get("spoofed") ?? 0,
            unverified: b.verdicts.get("unverified") ?? 0,
            methods: verification.methodsOf(b.bot),
            last_seen: b.last
          })),
          ...cover,
          ranges_snapshot: verification.snapshot().date
        } satisfies PageBots
      })

    const searchPerformance: AgentsShape["searchPerformance"] = (accountId, slug, rangeParam) =>
      Effect.gen(function*() {
        const { brand, range, window } = yield* context(accountId, slug, rangeParam)
        const noFilter: CrawlerFilter = { bot: null, vendor: null, kind: null }
        const top = (kind: string) =>
          Effect.map(
            topPagesOf(brand, window, { ...noFilter, kind }),
            (result) => result.rows.map((row) => ({ path: row.path, count: row.hits }))
          )
        const [daily, referrals, searchTop, fetchTop, cover] = yield* Effect.all([
          repo.daily(accountId, brand.id, window.from, window.to, noFilter),
          repo.referrals(accountId, brand.id, window.from, window.to),
          top("search_crawler"),
          top("browsing_agent"),
          coverage(brand, window.from, window.to)
        ], { concurrency: "unbounded" })
        type Funnel = { search_crawls: number; agent_fetches: number; referrals: number }
        const empty = (): Funnel => ({ search_crawls: 0, agent_fetches: 0, referrals: 0 })
        const totals = empty()
        const perDay = new Map<string, { funnel: Funnel; engines: Map<string, Funnel> }>()
        const perEngine = new Map<string, Funnel>()
        const add = (day: string, engine: string | null, stage: keyof Funnel, n: number) => {
          totals[stage] += n
          const d = perDay.get(day) ?? { funnel: empty(), engines: new Map() }
          d.funnel[stage] += n
          perDay.set(day, d)
          if (engine === null) return
          const de = d.engines.get(engine) ?? empty()
          de[stage] += n
          d.engines.set(engine, de)
          const e = perEngine.get(engine) ?? empty()
          e[stage] += n
          perEngine.set(engine, e)
        }
        for (const row of daily) {
          const stage = row.kind === "search_crawler" ? "search_crawls" : row.kind === "browsing_agent" ? "agent_fetches" : null
          if (stage !== null) add(row.day, VENDOR_ENGINES[row.vendor]?.[0] ?? null, stage, row.hits)
        }
        const landing = new Map<string, number>()
        for (const row of referrals) {
          add(row.day, row.engine, "referrals", row.referrals)
          sumInto(landing, row.path, row.referrals)
        }
        const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
        return {
          brand_slug: brand.slug,
          range,
          from: window.from,
          to: window.to,
          totals,
          trend: window.list.map((date) => {
            const d = perDay.get(date)
            return {
              date,
              ...(d?.funnel ?? empty()),
              by_engine: Object.fromEntries([...(d?.engines ?? [])].sort(([a], [b]) => byName(a, b)))
            }
          }),
          engines: [...perEngine].map(([engine, f]) => ({ engine, ...f })).sort((a, b) =>
            b.referrals - a.referrals || b.search_crawls + b.agent_fetches - (a.search_crawls + a.agent_fetches) ||
            byName(a.engine, b.engine)
          ),
          top_pages: {
            search_crawls: searchTop,
            agent_fetches: fetchTop,
            referrals: [...landing].map(([path, count]) => ({ path, count }))
              .sort((a, b) => b.count - a.count || byName(a.path, b.path)).slice(0, TOP_PAGES)
          },
          ...cover
        } satisfies SearchPerformance
      })

    const attribution: AgentsShape["attribution"] = (accountId, slug, rangeParam) =>
      Effect.gen(function*() {
        const { brand, range, window } = yield* context(accountId, slug, rangeParam)
        const [daily, referrals] = yield* Effect.all([
          repo.daily(accountId, brand.id, window.from, window.to, { bot: null, vendor: null, kind: null }),
          repo.referrals(accountId, brand.id, window.from, window.to)
        ], { concurrency: "unbounded" })
        let total = 0
        const perDay = new Map<string, Map<string, number>>()
        const engines = new Map<string, number>()
        const pages = new Map<string, Map<string, number>>()
        for (const row of referrals) {
          total += row.referrals
          const d = perDay.get(row.day) ?? new Map<string, number>()
          sumInto(d, row.engine, row.referrals)
          perDay.set(row.day, d)
          sumInto(engines, row.engine, row.referrals)
          const p = pages.get(row.path) ?? new Map<string, number>()
          sumInto(p, row.engine, row.referrals)
          pages.set(row.path, p)
        }
        const vendorHits = new Map<string, number>()
        for (const row of daily) sumInto(vendorHits, row.vendor, row.hits)
        const vendorReferrals = new Map<string, number>()
        for (const [engine, n] of engines) {
          const vendor = ENGINE_VENDOR[engine]
          if (vendor !== undefined) sumInto(vendorReferrals, vendor, n)
        }
        const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
        const sortedRecord = (m: Map<string, number>) => Object.fromEntries([...m].sort(([a], [b]) => byName(a, b)))
        const sumOf = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
        return {
          brand_slug: brand.slug,
          range,
          from: window.from,
          to: window.to,
          total_referrals: total,
          trend: window.list.map((date) => {
            const d = perDay.get(date) ?? new Map<string, number>()
            return { date, referrals: sumOf(d), by_engine: sortedRecord(d) }
          }),
          engines: [...engines].map(([engine, n]) => ({ engine, referrals: n, share: total === 0 ? 0 : n / total }))
            .sort((a, b) => b.referrals - a.referrals || byName(a.engine, b.engine)),
          landing_pages: [...pages].map(([path, m]) => ({ path, referrals: sumOf(m), by_engine: sortedRecord(m) }))
            .sort((a, b) => b.referrals - a.referrals || byName(a.path, b.path)).slice(0, MAX_LANDING_PAGES),
          vendors: [...new Set([...vendorHits.keys(), ...vendorReferrals.keys()])].map((vendor) => {
            const crawlerHits = vendorHits.get(vendor) ?? 0
            const refs = vendorReferrals.get(vendor) ?? 0
            return {
              vendor,
              engines: VENDOR_ENGINES[vendor] ?? [],
              crawler_hits: crawlerHits,
              referrals: refs,
              crawl_to_referral_ratio: refs === 0 ? null : crawlerHits / refs
            }
          }).sort((a, b) => b.crawler_hits - a.crawler_hits || b.referrals - a.referrals || byName(a.vendor, b.vendor))
        } satisfies Attribution
      })

    /** Hits by bot, most first, then name (byte order). */
    const botList = (m: Map<string, number>) =>
      [...m].map(([bot, hits]) => ({ bot, hits })).sort((a, b) => b.hits - a.hits || (a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : 0))
    const statusRecord = (m: Map<number, number>) =>
      Object.fromEntries([...m].sort(([a], [b]) => a - b).map(([status, n]) => [String(status), n]))

    const errorPages: AgentsShape["errorPages"] = (accountId, slug, rangeParam, rule) =>
      Effect.gen(function*() {
        const { brand, window } = yield* context(accountId, slug, rangeParam)
        const failing = yield* repo.errorPaths(accountId, brand.id, {
          from: window.from,
          to: window.to,
          days: window.days,
          ...rule
        })
        const detail = yield* repo.pathStatuses(accountId, brand.id, window.from, window.to, failing.map((row) => row.path))
        const perPath = new Map<string, { statuses: Map<number, number>; bots: Map<string, number> }>()
        for (const row of detail) {
          if (row.status === null || row.status < 400) continue
          const entry = perPath.get(row.path) ?? { statuses: new Map(), bots: new Map() }
          entry.statuses.set(row.status, (entry.statuses.get(row.status) ?? 0) + row.hits)
          sumInto(entry.bots, row.bot, row.hits)
          perPath.set(row.path, entry)
        }
        return failing.map((row) => {
          const entry = perPath.get(row.path)
          return {
            path: row.path,
            hits: row.hits,
            errors: row.errors,
            statuses: entry === undefined ? {} : statusRecord(entry.statuses),
            bots: entry === undefined ? [] : botList(entry.bots)
          }
        })
      })

    const pathStatuses: AgentsShape["pathStatuses"] = (accountId, slug, rangeParam, path) =>
      Effect.gen(function*() {
        const { brand, window } = yield* context(accountId, slug, rangeParam)
        const detail = yield* repo.pathStatuses(accountId, brand.id, window.from, window.to, [path])
        let hits = 0
        const statuses = new Map<number, number>()
        const bots = new Map<string, number>()
        for (const row of detail) {
          hits += row.hits
          if (row.status !== null) statuses.set(row.status, (statuses.get(row.status) ?? 0) + row.hits)
          sumInto(bots, row.bot, row.hits)
        }
        return { hits, statuses: statusRecord(statuses), bots: botList(bots) }
      })

    const botVerdicts: AgentsShape["botVerdicts"] = (accountId, slug, rangeParam) =>
      Effect.gen(function*() {
        const { brand, window } = yield* context(accountId, slug, rangeParam)
        return yield* repo.botVerdicts(accountId, brand.id, window.from, window.to)
      })

    return { dashboard, pages, pageBots, searchPerformance, attribution, errorPages, pathStatuses, botVerdicts }
  })
).pipe(Layer.provide([BrandsLive, VerificationLive]))
