import { Config, Context, Effect, Layer, Option } from "effect"
import { Brands, type BrandRow, type CompetitorRow, BrandsLive } from "../brands/Brands.js"
import { notFound, type NotFound } from "../platform/HttpErrors.js"
import { ENGINE_SLUGS, type Range, rangeDays, rangeOrDefault } from "../platform/Schemas.js"
import { newcombe, roundInterval, scoreInterval, type ShareSums, shareDelta, shareInterval, shareOfVoice, wilson } from "../platform/Statistics.js"
import { periodOf } from "../platform/Days.js"
import { now } from "../platform/Time.js"
import type {
  CitationsResponse,
  CompetitorCitationsResponse,
  CompetitorPromptsResponse,
  FanoutsResponse,
  GapResponse,
  IndustryMetricsResponse,
  IndustryRankingResponse,
  IndustryRankingRow,
  MentionsResponse,
  ModelResponse,
  PortfolioResponse,
  PromptsResponse,
  RankStats,
  SnapshotsResponse,
  TopicsResponse
} from "./Api.js"
import { resolveLocale } from "./Regions.js"
import {
  type CitationChange,
  type EntityPeriodTotals,
  type MentionCounts,
  type Period,
  type PopulationTotals,
  type Scope,
  VisibilityRepo
} from "./Repo.js"

/**
 * The visibility reads: every figure as docs/visibility.md
 * defines it, summed by VisibilityRepo in SQL, turned into ratios and wire shapes here. Responses
 * are built in their JSON (Encoded) form: handlers send them as they are (FastJson.encodedJson).
 * Days are UTC; a range of N days ends today and the previous period is the N days before it.
 */

type Wire<S extends { readonly Encoded: unknown }> = S["Encoded"]

export interface VisibilityConfigShape {
  /** Most fan-out groups in one /citations/fanouts answer (truncated_groups says when cut). */
  readonly fanoutGroupCap: number
}
export class VisibilityConfig extends Context.Tag("VisibilityConfig")<VisibilityConfig, VisibilityConfigShape>() {}
export const VISIBILITY_DEFAULTS: VisibilityConfigShape = { fanoutGroupCap: 200 }
export const VisibilityConfigLive = Layer.effect(
  VisibilityConfig,
  Effect.map(
    Config.integer("FANOUT_GROUP_CAP").pipe(Config.withDefault(VISIBILITY_DEFAULTS.fanoutGroupCap), Effect.orDie),
    (cap) => ({ fanoutGroupCap: Math.max(1, cap) })
  )
)
export const visibilityConfigTest = (overrides: Partial<VisibilityConfigShape> = {}) =>
  Layer.succeed(VisibilityConfig, { ...VISIBILITY_DEFAULTS, ...overrides })

export interface VisibilityShape {
  readonly snapshots: (accountId: number, slug: string, range: Range | undefined) => Effect.Effect<Wire<typeof SnapshotsResponse>, NotFound>
  readonly mentions: (
    accountId: number,
    slug: string,
    filter: { readonly sentiment?: string | undefined; readonly region?: string | undefined; readonly language?: string | undefined }
  ) => Effect.Effect<Wire<typeof MentionsResponse>, NotFound>
  readonly prompts: (accountId: number, slug: string) => Effect.Effect<Wire<typeof PromptsResponse>, NotFound>
  readonly portfolio: (accountId: number, range: Range | undefined) => Effect.Effect<Wire<typeof PortfolioResponse>>
  /** Every brand's citations, or one brand's (its slug; 404 when unknown). */
  readonly citations: (accountId: number, range: Range | undefined, brand?: string | undefined) => Effect.Effect<Wire<typeof CitationsResponse>, NotFound>
  readonly fanouts: (accountId: number, range: Range | undefined) => Effect.Effect<Wire<typeof FanoutsResponse>>
  readonly model: (accountId: number, range: Range | undefined, brand: string | undefined) => Effect.Effect<Wire<typeof ModelResponse>, NotFound>
  readonly topics: (accountId: number) => Effect.Effect<Wire<typeof TopicsResponse>>
  readonly industryMetrics: (
    accountId: number,
    options: {
      readonly range?: Range | undefined
      readonly engine?: string | undefined
      readonly brand?: string | undefined
      readonly region?: string | undefined
      readonly language?: string | undefined
    }
  ) => Effect.Effect<Wire<typeof IndustryMetricsResponse>, NotFound>
  /** Of the primary brand's competitor, or of the competitor of the brand given (its slug; 404 when unknown). */
  readonly competitorCitations: (accountId: number, name: string, range: Range | undefined, brand?: string | undefined) => Effect.Effect<Wire<typeof CompetitorCitationsResponse>, NotFound>
  readonly competitorPrompts: (accountId: number, name: string, range: Range | undefined, brand?: string | undefined) => Effect.Effect<Wire<typeof CompetitorPromptsResponse>, NotFound>
  /** The gap of the primary brand, or of the brand given (its slug; 404 when unknown); optionally for one topic. */
  readonly gap: (
    accountId: number,
    range: Range | undefined,
    region: string | undefined,
    options?: { readonly topic?: string | undefined; readonly brand?: string | undefined }
  ) => Effect.Effect<Wire<typeof GapResponse>, NotFound>
  readonly ranking: (
    accountId: number,
    range: Range | undefined,
    topic: string | undefined,
    brand?: string | undefined,
    filter?: { readonly engine?: string | undefined; readonly region?: string | undefined }
  ) => Effect.Effect<Wire<typeof IndustryRankingResponse>, NotFound>
  /** The citation gap of one brand over every region (for the primary brand: GET /industry/gap's domains). */
  readonly brandGap: (accountId: number, slug: string, range: Range | undefined) => Effect.Effect<Wire<typeof GapResponse>["domains"], NotFound>
  /**
   * Per monitored prompt of the brand with answers in the range (every region and engine): its answers,
   * those mentioning the brand, and per tracked competitor those mentioning it.
   */
  readonly promptCompetition: (accountId: number, slug: string, range: Range | undefined) => Effect.Effect<ReadonlyArray<PromptCompetition>, NotFound>
  /** A brand's mentions over responses, per engine and overall, in two adjacent periods (UTC days; the alerts). */
  readonly mentionCounts: (
    accountId: number,
    brandId: number,
    periods: { readonly previousFrom: string; readonly currentFrom: string; readonly until: string }
  ) => Effect.Effect<ReadonlyArray<MentionCounts>>
  /** Owned domains an engine started citing in the current period or stopped citing after the previous one (the alerts). */
  readonly citationChanges: (
    accountId: number,
    brandId: number,
    periods: { readonly previousFrom: string; readonly currentFrom: string; readonly until: string }
  ) => Effect.Effect<ReadonlyArray<CitationChange>>
}

export interface PromptCompetition {
  readonly prompt: string
  readonly answers: number
  readonly brandMentions: number
  /** Every tracked competitor, mentions 0 included, by name. */
  readonly competitors: ReadonlyArray<{ readonly name: string; readonly mentions: number }>
}

export class Visibility extends Context.Tag("Visibility")<Visibility, VisibilityShape>() {}

// ---------------------------------------------------------------------------
// Pure helpers (exported for unit tests)
// ---------------------------------------------------------------------------

export const ratio = (part: number, whole: number) => (whole === 0 ? 0 : part / whole)
export const round1 = (x: number) => Math.round(x * 10) / 10 + 0

/** Case-insensitive alphabetical order, then by code point (deterministic). */
export const alphabetical = (a: string, b: string) => {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0
}

const rankStats = (s: { mentions: number; rankSum: number; top1: number; top3: number }): Wire<typeof RankStats> => ({
  avg_rank: ratio(s.rankSum, s.mentions),
  top1_share: ratio(s.top1, s.mentions),
  top3_share: ratio(s.top3, s.mentions),
  mentions: s.mentions
})

/** English stop words left out of `total_keywords` (3+ letters; shorter words are dropped anyway). */
export const STOP_WORDS = new Set(
  (
    "the and for are but not you all any can had her was one our out has him his how its may new now old see two who boy did " +
    "get let put say she too use way why yes yet via per also than that this with from your have what when where which while " +
    "will would could should shall might must been being were they them their there these those then into onto upon about above " +
    "after again against before below between both down during each even ever every few further here just more most much must " +
    "myself nor off once only other over own same some such through under until very whom whose why yours ourselves themselves " +
    "itself himself herself does doing done make made like vs versus without within among across around along toward towards " +
    "because since though although unless whether either neither else etc something anything nothing everything someone anyone"
  ).split(/\s+/)
)

/** Distinct lower-cased words of 3+ letters, stop words removed (docs/visibility.md `total_keywords`). */
export const keywordsOf = (texts: ReadonlyArray<string>): Set<string> => {
  const words = new Set<string>()
  for (const text of texts) {
    for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
      if ([...word].length >= 3 && !STOP_WORDS.has(word)) words.add(word)
    }
  }
  return words
}

/**
 * Tiers of themes by count: r = themes with a strictly higher count (so equal counts share a tier),
 * tier = 1 + floor(3 r / n): the top, middle and bottom thirds.
 */
/** 1 + floor(3 r / n), which is 1, 2 or 3 because r < n. */
const tierOf = (higher: number, n: number): 1 | 2 | 3 => {
  const tier = 1 + Math.floor((3 * higher) / n)
  return tier <= 1 ? 1 : tier === 2 ? 2 : 3
}

export const tiersOf = (themes: ReadonlyArray<{ readonly topic: string; readonly count: number }>) => {
  const sorted = [...themes].sort((a, b) => b.count - a.count || alphabetical(a.topic, b.topic))
  const n = sorted.length
  return sorted.map((theme) => {
    const higher = sorted.filter((other) => other.count > theme.count).length
    return { theme: theme.topic, count: theme.count, tier: tierOf(higher, n) }
  })
}

const LABEL: Record<string, string> = { pos: "positive", neu: "neutral", neg: "negative" }
const BRAND_NOT_FOUND = notFound("brand not found")
const COMPETITOR_NOT_FOUND = notFound("competitor not found")

/** The sums of one entity's share of voice over n observations (a_i is 0 or 1, so Σa² = Σa). */
const shareSums = (n: number, sumA: number, sumM: number, sumAM: number, sumM2: number, naming: number): ShareSums => ({
  n,
  sumA,
  sumM,
  sumA2: sumA,
  sumAM,
  sumM2,
  naming
})

/** A Wilson interval of k/n rounded to 4 decimals (rates on 0..1); null when n = 0. */
const rateCi = (k: number, n: number) => roundInterval(wilson(k, n))

/** Share-of-voice rows (docs/visibility.md industry `ranking[]`); empty when the range has no observations. */
const rankingRows = (
  brand: BrandRow,
  competitors: ReadonlyArray<CompetitorRow>,
  entities: ReadonlyArray<EntityPeriodTotals>,
  population: PopulationTotals
): Array<Wire<typeof IndustryRankingRow>> => {
  if (population.responses === 0) return []
  const byId = new Map(entities.map((e) => [e.entityId, e]))
  const list = [
    { id: 0, name: brand.name, domain: brand.domain, pinned: false, own: true },
    ...competitors.map((c) => ({ id: c.id, name: c.name, domain: c.domain, pinned: c.pinned, own: false }))
  ]
  const total = list.reduce((sum, e) => sum + (byId.get(e.id)?.mentions ?? 0), 0)
  const prevTotal = list.reduce((sum, e) => sum + (byId.get(e.id)?.prevMentions ?? 0), 0)
  return list
    .map((e) => {
      const t = byId.get(e.id)
      const mentions = t?.mentions ?? 0
      // Σm is the share's own denominator (the listed entities' mentions), the other sums per observation.
      const current = shareOfVoice(
        shareSums(population.responses, mentions, total, t?.coMentions ?? 0, population.entityMentionsSq, population.entityObservations)
      )
      const previous = shareOfVoice(
        shareSums(
          population.prevResponses,
          t?.prevMentions ?? 0,
          prevTotal,
          t?.prevCoMentions ?? 0,
          population.prevEntityMentionsSq,
          population.prevEntityObservations
        )
      )
      const change = shareDelta(current, previous)
      return {
        name: e.name,
        mentions,
        share: ratio(mentions, total),
        delta: ratio(mentions, total) - ratio(t?.prevMentions ?? 0, prevTotal),
        is_own: e.own,
        is_pinned: e.pinned,
        domain: e.domain,
        sentiment: {
          pos: ratio(t?.positive ?? 0, mentions),
          neu: ratio(t?.neutral ?? 0, mentions),
          neg: ratio(t?.negative ?? 0, mentions)
        },
        share_ci95: roundInterval(shareInterval(current)),
        delta_ci95: roundInterval(change.interval),
        significant: change.significant
      }
    })
    .sort((a, b) => b.mentions - a.mentions || alphabetical(a.name, b.name))
}

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

export const VisibilityLive = Layer.effect(
  Visibility,
  Effect.gen(function*() {
    const repo = yield* VisibilityRepo
    const brands = yield* Brands
    const config = yield* VisibilityConfig

    const brandBySlug = brands.row
    /** The account's brands, oldest first (the primary brand is the first, the newest the last). */
    const brandsOf = brands.rows
    const primaryBrand = (accountId: number) => Effect.map(brandsOf(accountId), (brands) => Option.fromNullable(brands[0]))

    const competitorNamed = (accountId: number, brand: BrandRow, name: string) =>
      Effect.flatMap(brands.competitors(accountId, brand.id), (competitors) => {
        const wanted = name.toLowerCase()
        const found = competitors.find((c) => c.name.toLowerCase() === wanted)
        return found === undefined ? Effect.fail(COMPETITOR_NOT_FOUND) : Effect.succeed(found)
      })
    /** A competitor of the brand given (its slug), else of the primary brand. */
    const brandCompetitor = (accountId: number, name: string, slug: string | undefined) =>
      Effect.flatMap(
        slug === undefined || slug === "" ? primaryBrand(accountId) : Effect.map(brandBySlug(accountId, slug), Option.some),
        (brand) =>
          Option.isNone(brand)
            ? Effect.fail(COMPETITOR_NOT_FOUND)
            : Effect.map(competitorNamed(accountId, brand.value, name), (competitor) => ({ brand: brand.value, competitor }))
      )

    const snapshots: VisibilityShape["snapshots"] = (accountId, slug, rangeParam) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const brand = yield* brandBySlug(accountId, slug)
        const { from, to } = periodOf(yield* now, rangeDays(range))
        const [totals, entities, competitors] = yield* Effect.all([
          repo.dayEngineTotals(accountId, brand.id, from, to),
          repo.dayEntityTotals(accountId, brand.id, from, to),
          brands.competitors(accountId, brand.id)
        ], { concurrency: "unbounded" })
        const names = new Map(competitors.map((c) => [c.id, c.name]))
        type Day = { -readonly [K in keyof Wire<typeof SnapshotsResponse>["snapshots"][number]]: Wire<typeof SnapshotsResponse>["snapshots"][number][K] }
        const days = new Map<string, Day & { cited: number }>()
        for (const row of totals) {
          let day = days.get(row.day)
          if (day === undefined) {
            day = {
              date: row.day,
              citation_rate: 0,
              brand_mentions: 0,
              total_responses: 0,
              per_engine: {},
              sentiment_avg: 0,
              sentiment_pos: 0,
              sentiment_neu: 0,
              sentiment_neg: 0,
              ranking: rankStats({ mentions: 0, rankSum: 0, top1: 0, top3: 0 }),
              ranking_per_engine: {},
              sentiment_per_competitor: {},
              mention_rate: 0,
              mention_rate_ci95: null,
              citation_rate_ci95: null,
              per_engine_n: {},
              per_engine_ci95: {},
              cited: 0
            }
            days.set(row.day, day)
          }
          day.total_responses += row.responses
          day.brand_mentions += row.mentions
          day.cited += row.cited
          ;(day.per_engine as Record<string, number>)[row.engine] = ratio(row.mentions, row.responses)
          ;(day.per_engine_n as Record<string, number>)[row.engine] = row.responses
          ;(day.per_engine_ci95 as Record<string, unknown>)[row.engine] = rateCi(row.mentions, row.responses)
          ;(day.ranking_per_engine as Record<string, Wire<typeof RankStats>>)[row.engine] = rankStats({
            mentions: 0,
            rankSum: 0,
            top1: 0,
            top3: 0
          })
        }
        const own = new Map<string, { mentions: number; rankSum: number; top1: number; top3: number; sentimentSum: number; positive: number; neutral: number; negative: number }>()
        for (const row of entities) {
          const day = days.get(row.day)
          if (day === undefined) continue
          if (row.entityId === 0) {
            ;(day.ranking_per_engine as Record<string, Wire<typeof RankStats>>)[row.engine!] = rankStats(row)
            const sum = own.get(row.day) ?? { mentions: 0, rankSum: 0, top1: 0, top3: 0, sentimentSum: 0, positive: 0, neutral: 0, negative: 0 }
            sum.mentions += row.mentions
            sum.rankSum += row.rankSum
            sum.top1 += row.top1
            sum.top3 += row.top3
            sum.sentimentSum += row.sentimentSum
            sum.positive += row.positive
            sum.neutral += row.neutral
            sum.negative += row.negative
            own.set(row.day, sum)
          } else {
            const name = names.get(row.entityId)
            if (name !== undefined && row.mentions > 0) {
              ;(day.sentiment_per_competitor as Record<string, number>)[name] = row.sentimentSum / row.mentions
            }
          }
        }
        const snapshots = [...days.values()].map(({ cited, ...day }) => {
          const sum = own.get(day.date)
          return {
            ...day,
            citation_rate: ratio(cited, day.total_responses),
            mention_rate: ratio(day.brand_mentions, day.total_responses),
            mention_rate_ci95: rateCi(day.brand_mentions, day.total_responses),
            citation_rate_ci95: rateCi(cited, day.total_responses),
            ...(sum === undefined ? {} : {
              sentiment_avg: ratio(sum.sentimentSum, sum.mentions),
              sentiment_pos: ratio(sum.positive, sum.mentions),
              sentiment_neu: ratio(sum.neutral, sum.mentions),
              sentiment_neg: ratio(sum.negative, sum.mentions),
              ranking: rankStats(sum)
            })
          }
        })
        return { brand_slug: brand.slug, range, snapshots, count: snapshots.length }
      })

    const mentions: VisibilityShape["mentions"] = (accountId, slug, filter) =>
      Effect.gen(function*() {
        const brand = yield* brandBySlug(accountId, slug)
        const locale = resolveLocale(brand, filter.region, filter.language)
        const { from, to } = periodOf(yield* now, 30)
        const rows = yield* repo.mentions(accountId, brand.id, {
          from,
          to,
          region: locale.region,
          language: locale.language,
          label: filter.sentiment ? LABEL[filter.sentiment] ?? null : null,
          limit: 500
        })
        return {
          brand_slug: brand.slug,
          region: locale.region,
          language: locale.language,
          mentions: rows.map((m) => ({
            id: m.id,
            engine: m.engine,
            prompt: m.prompt,
            response_snippet: m.snippet,
            rank: m.rank,
            sentiment: m.label,
            cited_url: m.citedUrl,
            seen_at: m.seenAt.toISOString()
          })),
          count: rows.length
        }
      })

    const prompts: VisibilityShape["prompts"] = (accountId, slug) =>
      Effect.gen(function*() {
        const brand = yield* brandBySlug(accountId, slug)
        const list = yield* repo.promptList(accountId, brand.id)
        return {
          prompts: list.prompts.map((p) => ({
            id: p.id,
            prompt: p.prompt,
            topic: p.topic,
            intent: p.intent,
            created_at: p.createdAt.toISOString(),
            source: p.source,
            source_query: p.sourceQuery
          })),
          count: list.prompts.length,
          used_total: list.usedTotal,
          limit: list.limit
        }
      })

    const portfolio: VisibilityShape["portfolio"] = (accountId, rangeParam) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const at = yield* now
        const { from, to } = periodOf(at, rangeDays(range))
        const week = periodOf(at, 7)
        const [brands, engines, competitors] = yield* Effect.all([
          brandsOf(accountId),
          repo.portfolioEngines(accountId, { from, to, last7From: week.from, prev7From: week.prevFrom }),
          repo.portfolioCompetitors(accountId, from, to)
        ], { concurrency: "unbounded" })
        return {
          brands: brands.map((brand) => {
            const rows = engines.filter((e) => e.brandId === brand.id)
            const sum = (f: (row: typeof rows[number]) => number) => rows.reduce((s, row) => s + f(row), 0)
            const n = sum((r) => r.responses)
            const score = round1(100 * ratio(sum((r) => r.mentions), n))
            const last7 = round1(100 * ratio(sum((r) => r.mentions7), sum((r) => r.responses7)))
            const prev7 = round1(100 * ratio(sum((r) => r.mentionsPrev7), sum((r) => r.responsesPrev7)))
            const topEngine = rows
              .filter((r) => r.responses > 0)
              .map((r) => ({ engine: r.engine, rate: r.mentions / r.responses }))
              .sort((a, b) => b.rate - a.rate || alphabetical(a.engine, b.engine))[0]
            const topCompetitor = competitors
              .filter((c) => c.brandId === brand.id && c.mentions > 0)
              .sort((a, b) => b.mentions - a.mentions || alphabetical(a.name, b.name))[0]
            return {
              slug: brand.slug,
              name: brand.name,
              ai_presence_score: score,
              delta_7d: round1(last7 - prev7),
              top_engine: topEngine?.engine ?? "",
              top_competitor: topCompetitor?.name ?? "",
              n,
              ai_presence_score_ci95: scoreInterval(wilson(sum((r) => r.mentions), n))
            }
          }),
          range,
          region: "all"
        }
      })

    /** The brand of a `brand` selector: the slug's brand (404 when unknown), else None. */
    const selected = (accountId: number, slug: string | undefined) =>
      slug === undefined || slug === "" ? Effect.succeed(Option.none<BrandRow>()) : Effect.map(brandBySlug(accountId, slug), Option.some)

    const citations: VisibilityShape["citations"] = (accountId, rangeParam, brandParam) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const brand = yield* selected(accountId, brandParam)
        const { from, to } = periodOf(yield* now, rangeDays(range))
        const rows = yield* (Option.isSome(brand)
          ? repo.brandDomains(accountId, brand.value.id, from, to)
          : repo.workspaceDomains(accountId, from, to))
        const total = rows.reduce((sum, row) => sum + row.citations, 0)
        return {
          domains: rows.map((row) => ({
            domain: row.domain,
            citations: row.citations,
            share: ratio(row.citations, total),
            bucket: row.bucket
          })),
          total_citations: total,
          range
        }
      })

    const fanouts: VisibilityShape["fanouts"] = (accountId, rangeParam) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const days = rangeDays(range)
        const { from, to } = periodOf(yield* now, days)
        const cap = config.fanoutGroupCap
        const rows = yield* repo.fanoutGroups(accountId, from, to, cap + 1)
        type Group = Wire<typeof FanoutsResponse>["prompts"][number]
        const groups: Array<Omit<Group, "fanouts"> & { observationId: number; fanouts: Array<Group["fanouts"][number]> }> = []
        for (const row of rows) {
          let group = groups[groups.length - 1]
          if (group === undefined || group.observationId !== row.observationId) {
            group = {
              observationId: row.observationId,
              prompt_id: row.promptNum,
              prompt_text: row.promptText,
              brand_slug: row.brandSlug,
              brand_name: row.brandName,
              engine: row.engine,
              snapshot_date: row.day,
              fanouts: []
            }
            groups.push(group)
          }
          if (row.position !== null) {
            group.fanouts.push({
              index: row.position,
              sub_question: row.subQuestion ?? "",
              citations: row.citations ?? []
            })
          }
        }
        const truncated = groups.length > cap
        return {
          range_days: days,
          prompts: groups.slice(0, cap).map(({ observationId: _, ...group }) => group),
          truncated_groups: truncated
        }
      })

    const model: VisibilityShape["model"] = (accountId, rangeParam, brandSlug) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const brand = brandSlug === undefined || brandSlug === ""
          ? Option.fromNullable((yield* brandsOf(accountId)).at(-1))
          : Option.some(yield* brandBySlug(accountId, brandSlug))
        if (Option.isNone(brand)) return { engines: [], range }
        const period = periodOf(yield* now, rangeDays(range))
        const rows = yield* repo.engineTotals(accountId, brand.value.id, period)
        const engines = rows
          .map((row) => {
            const score = 100 * ratio(row.mentions, row.responses)
            const change = newcombe(row.mentions, row.responses, row.prevMentions, row.prevResponses)
            return {
              engine: row.engine,
              score,
              delta: score - 100 * ratio(row.prevMentions, row.prevResponses),
              n: row.responses,
              score_ci95: scoreInterval(wilson(row.mentions, row.responses)),
              delta_ci95: scoreInterval(change.interval),
              significant: change.significant
            }
          })
          .sort((a, b) => b.score - a.score || alphabetical(a.engine, b.engine))
        return { engines, range }
      })

    const topics: VisibilityShape["topics"] = (accountId) =>
      Effect.map(repo.topics(accountId), ({ texts, themes }) => ({
        themes: tiersOf(themes),
        total_keywords: keywordsOf(texts).size
      }))

    const industryMetrics: VisibilityShape["industryMetrics"] = (accountId, options) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(options.range)
        const brand = options.brand === undefined || options.brand === ""
          ? yield* Effect.flatMap(primaryBrand(accountId), Option.match({ onNone: () => Effect.fail(BRAND_NOT_FOUND), onSome: Effect.succeed }))
          : yield* brandBySlug(accountId, options.brand)
        const locale = resolveLocale(brand, options.region, options.language)
        const engine = options.engine === undefined || options.engine === "" ? null : options.engine
        const scope: Scope = { region: locale.region, language: locale.language, engine }
        const at = yield* now
        const period = periodOf(at, rangeDays(range))
        const [totals, series, last, competitors] = yield* Effect.all([
          repo.entityTotals(accountId, brand.id, period, scope),
          repo.series(accountId, brand.id, period.from, period.to, scope),
          repo.lastObserved(accountId, brand.id, period.from, period.to, scope),
          brands.competitors(accountId, brand.id)
        ], { concurrency: "unbounded" })
        const ranking = rankingRows(brand, competitors, totals.entities, totals.population)
        const own = totals.entities.find((e) => e.entityId === 0)
        const names = new Map(competitors.map((c) => [c.id, c.name]))
        const perDay = new Map<string, Record<string, number>>()
        for (const day of series.days) perDay.set(day.day, Object.fromEntries(competitors.map((c) => [c.name, 0])))
        for (const row of series.competitors) {
          const name = names.get(row.entityId)
          const day = perDay.get(row.day)
          if (name !== undefined && day !== undefined) day[name] = row.mentions
        }
        const timeSeries = series.days.map((day) => ({
          date: day.day,
          brand_mentions: day.mentions,
          total_responses: day.responses,
          per_competitor: perDay.get(day.day)!
        }))
        return {
          brand_slug: brand.slug,
          brand_name: brand.name,
          range,
          from: period.from,
          to: period.to,
          engine: engine ?? "all",
          region: locale.region,
          language: locale.language,
          last_refreshed: (last ?? brand.addedAt).toISOString(),
          ranking,
          ranking_count: ranking.length,
          time_series: timeSeries,
          time_series_count: timeSeries.length,
          own: {
            total_mentions: own?.mentions ?? 0,
            total_responses: totals.population.responses,
            avg_position: ratio(own?.rankSum ?? 0, own?.mentions ?? 0),
            n: totals.population.responses,
            mention_rate: ratio(own?.mentions ?? 0, totals.population.responses),
            mention_rate_ci95: rateCi(own?.mentions ?? 0, totals.population.responses)
          },
          tracked_competitors: competitors.map((c) => c.name),
          methodology: {
            population:
              `The brand's answer observations from ${period.from} to ${period.to} (UTC days), region ${locale.region}, ` +
              `language ${locale.language}, engine ${engine ?? "all"}`,
            mentions: "Observations that mention the entity (its name or an alias as a whole word, or a citation on its domain)",
            share: "The entity's mentions / the sum of mentions over the brand and its competitors (share of voice)",
            delta: `share minus the share over the previous period, ${period.prevFrom} to the day before ${period.from}`,
            sentiment: "Shares of the entity's mentions labelled positive (score > 0.1), neutral, negative (score < -0.1)",
            avg_position: "Mean rank of the brand's mentions (1 = named first)",
            engine_filter: "Exact match on the engine slug; an unknown engine selects nothing",
            day_boundary: "UTC"
          }
        }
      })

    const competitorCitations: VisibilityShape["competitorCitations"] = (accountId, name, rangeParam, brandParam) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const { brand, competitor } = yield* brandCompetitor(accountId, name, brandParam)
        const { from, to } = periodOf(yield* now, rangeDays(range))
        const rows = yield* repo.competitorDomains(accountId, brand.id, competitor.id, from, to)
        const total = rows.reduce((sum, row) => sum + row.citations, 0)
        return {
          competitor: competitor.name,
          range,
          domains: rows.map((row) => ({
            domain: row.domain,
            citations: row.citations,
            share: ratio(row.citations, total),
            bucket: row.bucket
          })),
          total_citations: total
        }
      })

    const competitorPrompts: VisibilityShape["competitorPrompts"] = (accountId, name, rangeParam, brandParam) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const { brand, competitor } = yield* brandCompetitor(accountId, name, brandParam)
        const { from, to } = periodOf(yield* now, rangeDays(range))
        const rows = yield* repo.competitorPrompts(accountId, brand.id, competitor.id, from, to)
        const prompts = rows.map((row) => ({
          prompt_id: row.promptNum,
          prompt: row.prompt,
          topic: row.topic,
          appearances: row.appearances,
          engines: ENGINE_SLUGS.filter((_, i) => (row.engines & (1 << i)) !== 0).sort(alphabetical),
          avg_rank: ratio(row.rankSum, row.appearances),
          brand_mentioned: row.withBrand
        }))
        return { competitor: competitor.name, range, prompts, count: prompts.length }
      })

    /** The gap domains of one brand in a range (and region, null = all; topic, null = every prompt), ranked as GET /industry/gap ranks them. */
    const gapDomains = (accountId: number, brand: BrandRow, range: Range, region: string | null, topic: string | null) =>
      Effect.gen(function*() {
        const { from, to } = periodOf(yield* now, rangeDays(range))
        const [rows, competitors] = yield* Effect.all([
          topic === null
            ? repo.gap(accountId, brand.id, from, to, region)
            : repo.topicGap(accountId, brand.id, from, to, region, topic),
          brands.competitors(accountId, brand.id)
        ], { concurrency: "unbounded" })
        const names = new Map(competitors.map((c) => [c.id, c.name]))
        return rows
          .map((row) => ({
            domain: row.domain,
            bucket: row.bucket,
            opportunity: row.opportunity,
            competitors: row.competitorIds.flatMap((id) => names.get(id) ?? []).sort(alphabetical)
          }))
          .sort((a, b) => b.opportunity - a.opportunity || b.competitors.length - a.competitors.length || alphabetical(a.domain, b.domain))
      })

    const gap: VisibilityShape["gap"] = (accountId, rangeParam, regionParam, options) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const region = regionParam === undefined || regionParam === "" ? null : regionParam.toUpperCase()
        const topic = options?.topic === undefined || options.topic === "" ? null : options.topic
        const chosen = yield* selected(accountId, options?.brand)
        const brand = Option.isSome(chosen) ? chosen : yield* primaryBrand(accountId)
        const empty = { range, region: region ?? "all", domains: [], count: 0 }
        if (Option.isNone(brand)) return empty
        const domains = yield* gapDomains(accountId, brand.value, range, region, topic)
        return { ...empty, domains, count: domains.length }
      })

    const brandGap: VisibilityShape["brandGap"] = (accountId, slug, rangeParam) =>
      Effect.flatMap(brandBySlug(accountId, slug), (brand) => gapDomains(accountId, brand, rangeOrDefault(rangeParam), null, null))

    const promptCompetition: VisibilityShape["promptCompetition"] = (accountId, slug, rangeParam) =>
      Effect.gen(function*() {
        const brand = yield* brandBySlug(accountId, slug)
        const { from, to } = periodOf(yield* now, rangeDays(rangeOrDefault(rangeParam)))
        const [counts, competitors] = yield* Effect.all([
          repo.promptEntityCounts(accountId, brand.id, from, to),
          brands.competitors(accountId, brand.id)
        ], { concurrency: "unbounded" })
        const mentions = new Map<string, Map<number, number>>()
        for (const row of counts.entities) {
          const perEntity = mentions.get(row.promptId) ?? new Map<number, number>()
          perEntity.set(row.entityId, (perEntity.get(row.entityId) ?? 0) + row.mentions)
          mentions.set(row.promptId, perEntity)
        }
        const sorted = [...competitors].sort((a, b) => alphabetical(a.name, b.name))
        return counts.prompts.map((p) => {
          const perEntity = mentions.get(p.promptId)
          return {
            prompt: p.prompt,
            answers: p.responses,
            brandMentions: perEntity?.get(0) ?? 0,
            competitors: sorted.map((c) => ({ name: c.name, mentions: perEntity?.get(c.id) ?? 0 }))
          }
        })
      })

    const ranking: VisibilityShape["ranking"] = (accountId, rangeParam, topicParam, brandParam, filter) =>
      Effect.gen(function*() {
        const range = rangeOrDefault(rangeParam)
        const topic = topicParam === undefined || topicParam === "" ? null : topicParam
        const engine = filter?.engine === undefined || filter.engine === "" ? null : filter.engine
        const region = filter?.region === undefined || filter.region === "" ? null : filter.region.toUpperCase()
        // Every language of the region: the ranking's region filter narrows, it does not pick a locale.
        const scope: Scope = { region, language: null, engine }
        const chosen = yield* selected(accountId, brandParam)
        const brand = Option.isSome(chosen) ? chosen.value : yield* Effect.flatMap(
          primaryBrand(accountId),
          Option.match({ onNone: () => Effect.fail(BRAND_NOT_FOUND), onSome: Effect.succeed })
        )
        const period = periodOf(yield* now, rangeDays(range))
        const [totals, competitors] = yield* Effect.all([
          topic === null
            ? repo.entityTotals(accountId, brand.id, period, scope)
            : repo.topicEntityTotals(accountId, brand.id, period, topic, scope),
          brands.competitors(accountId, brand.id)
        ], { concurrency: "unbounded" })
        const rows = rankingRows(brand, competitors, totals.entities, totals.population)
        return {
          brand_slug: brand.slug,
          brand_name: brand.name,
          range,
          topic,
          engine: engine ?? "all",
          region: region ?? "all",
          total_responses: totals.population.responses,
          ranking: rows,
          ranking_count: rows.length
        }
      })

    return {
      snapshots,
      mentions,
      prompts,
      portfolio,
      citations,
      fanouts,
      model,
      topics,
      industryMetrics,
      competitorCitations,
      competitorPrompts,
      gap,
      ranking,
      brandGap,
      promptCompetition,
      mentionCounts: (accountId, brandId, { currentFrom, previousFrom, until }) =>
        repo.mentionCounts(accountId, brandId, previousFrom, currentFrom, until),
      citationChanges: (accountId, brandId, { currentFrom, previousFrom, until }) =>
        repo.citationChanges(accountId, brandId, previousFrom, currentFrom, until)
    }
  })
).pipe(Layer.provide(BrandsLive))
