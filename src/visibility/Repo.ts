import { PromptRow } from "../brands/Brands.js"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Period } from "../platform/Days.js"
import { firstRow, rows } from "../platform/Rows.js"
import { CustomPlanSql } from "../platform/Sql.js"
import { CitationBucket } from "./Api.js"
export type { Period }

/**
 * SQL of the visibility reads (docs/visibility.md). Every figure is summed in SQL from
 * the daily rollups (migrations 0003 and 0004), or, for the lists (mentions, fan-outs, prompts),
 * read row by row with a limit. Every query filters by the account of the authenticated key.
 * Days are `YYYY-MM-DD` strings (UTC days) both ways. Each query's rows are decoded with the row
 * Schema declared here, whose types are the ones the service reads; sums are cast to int or float8
 * in SQL so that every figure is a JS number on both back ends (a sum of bigint is numeric, which
 * the server driver returns as a string).
 */

/** A brand's mention rate in two adjacent periods (the visibility.changed alert). */
export const MentionCounts = Schema.Struct({
  /** null: every engine together. */
  engine: Schema.NullOr(Schema.String),
  currentN: Schema.Number,
  currentK: Schema.Number,
  previousN: Schema.Number,
  previousK: Schema.Number
})
export type MentionCounts = typeof MentionCounts.Type

/** An owned domain an engine started or stopped citing (the citation.gained/lost alerts). */
export const CitationChange = Schema.Struct({
  domain: Schema.String,
  engine: Schema.String,
  change: Schema.Literal("gained", "lost"),
  /** gained: the first day it cited in the current period; lost: the last day it cited before it. */
  day: Schema.String
})
export type CitationChange = typeof CitationChange.Type

/** Optional filters of the per-brand aggregates (null = every value). */
export interface Scope {
  readonly region: string | null
  readonly language: string | null
  readonly engine: string | null
}

export const DayEngineTotals = Schema.Struct({
  day: Schema.String,
  engine: Schema.String,
  responses: Schema.Number,
  mentions: Schema.Number,
  cited: Schema.Number
})
export type DayEngineTotals = typeof DayEngineTotals.Type

/** Mention rollup sums; `engine` is null on competitor rows (summed over engines). */
export const DayEntityTotals = Schema.Struct({
  day: Schema.String,
  entityId: Schema.Number,
  engine: Schema.NullOr(Schema.String),
  mentions: Schema.Number,
  rankSum: Schema.Number,
  top1: Schema.Number,
  top3: Schema.Number,
  sentimentSum: Schema.Number,
  positive: Schema.Number,
  neutral: Schema.Number,
  negative: Schema.Number
})
export type DayEntityTotals = typeof DayEntityTotals.Type

export const MentionRow = Schema.Struct({
  id: Schema.String,
  engine: Schema.String,
  prompt: Schema.String,
  snippet: Schema.String,
  rank: Schema.Number,
  label: Schema.Literal("positive", "neutral", "negative"),
  citedUrl: Schema.NullOr(Schema.String),
  seenAt: Schema.DateFromSelf
})
export type MentionRow = typeof MentionRow.Type

/** A monitored prompt as the prompts list reads it: the stored row of the brands domain. */
export type PromptListRow = PromptRow

/** The account's prompts in use and its plan's cap. */
const PromptTotalsRow = Schema.Struct({ usedTotal: Schema.Number, limit: Schema.Number })

export const ThemeRow = Schema.Struct({ topic: Schema.String, count: Schema.Number })
export type ThemeRow = typeof ThemeRow.Type

const PromptTextRow = Schema.Struct({ prompt: Schema.String })

export const EntityPeriodTotals = Schema.Struct({
  entityId: Schema.Number,
  mentions: Schema.Number,
  prevMentions: Schema.Number,
  /** Σ m over the observations mentioning the entity (m = entities an observation mentions), range / previous period. */
  coMentions: Schema.Number,
  prevCoMentions: Schema.Number,
  rankSum: Schema.Number,
  positive: Schema.Number,
  neutral: Schema.Number,
  negative: Schema.Number
})
export type EntityPeriodTotals = typeof EntityPeriodTotals.Type

export const PopulationTotals = Schema.Struct({
  responses: Schema.Number,
  prevResponses: Schema.Number,
  /** Σ m and Σ m² over the population's observations (m = entities an observation mentions), range / previous period. */
  entityMentions: Schema.Number,
  entityMentionsSq: Schema.Number,
  prevEntityMentions: Schema.Number,
  prevEntityMentionsSq: Schema.Number,
  /** Observations that mention at least one entity, range / previous period (migrations/0024). */
  entityObservations: Schema.Number,
  prevEntityObservations: Schema.Number
})
export type PopulationTotals = typeof PopulationTotals.Type

export const NO_POPULATION: PopulationTotals = {
  responses: 0,
  prevResponses: 0,
  entityMentions: 0,
  entityMentionsSq: 0,
  prevEntityMentions: 0,
  prevEntityMentionsSq: 0,
  entityObservations: 0,
  prevEntityObservations: 0
}

export const DomainTotals = Schema.Struct({ domain: Schema.String, bucket: CitationBucket, citations: Schema.Number })
export type DomainTotals = typeof DomainTotals.Type

export const FanoutRow = Schema.Struct({
  observationId: Schema.Number,
  promptNum: Schema.Number,
  promptText: Schema.String,
  brandSlug: Schema.String,
  brandName: Schema.String,
  engine: Schema.String,
  day: Schema.String,
  position: Schema.NullOr(Schema.Number),
  subQuestion: Schema.NullOr(Schema.String),
  citations: Schema.NullOr(Schema.Array(Schema.String))
})
export type FanoutRow = typeof FanoutRow.Type

export const CompetitorPromptRow = Schema.Struct({
  promptNum: Schema.Number,
  prompt: Schema.String,
  topic: Schema.String,
  appearances: Schema.Number,
  /** Bit set of ENGINE_SLUGS indexes (migrations/0004). */
  engines: Schema.Number,
  rankSum: Schema.Number,
  withBrand: Schema.Number
})
export type CompetitorPromptRow = typeof CompetitorPromptRow.Type

export const GapRow = Schema.Struct({
  domain: Schema.String,
  bucket: CitationBucket,
  opportunity: Schema.Number,
  competitorIds: Schema.Array(Schema.Number)
})
export type GapRow = typeof GapRow.Type

/** A monitored prompt's answers in a range (every region and engine). */
export const PromptAnswersRow = Schema.Struct({ promptId: Schema.String, prompt: Schema.String, responses: Schema.Number })
/** Observations of a prompt that mention an entity (0 = the brand, else a competitor id) in a range. */
export const PromptEntityRow = Schema.Struct({ promptId: Schema.String, entityId: Schema.Number, mentions: Schema.Number })
export interface PromptEntityCounts {
  readonly prompts: ReadonlyArray<typeof PromptAnswersRow.Type>
  readonly entities: ReadonlyArray<typeof PromptEntityRow.Type>
}

/** Per brand of the account and engine: responses and brand mentions in the range, the last 7 days and the 7 before. */
export const PortfolioEngineRow = Schema.Struct({
  brandId: Schema.Number,
  engine: Schema.String,
  responses: Schema.Number,
  mentions: Schema.Number,
  responses7: Schema.Number,
  mentions7: Schema.Number,
  responsesPrev7: Schema.Number,
  mentionsPrev7: Schema.Number
})
export type PortfolioEngineRow = typeof PortfolioEngineRow.Type

export const PortfolioCompetitorRow = Schema.Struct({ brandId: Schema.Number, name: Schema.String, mentions: Schema.Number })
export type PortfolioCompetitorRow = typeof PortfolioCompetitorRow.Type

export const EngineTotals = Schema.Struct({
  engine: Schema.String,
  responses: Schema.Number,
  mentions: Schema.Number,
  prevResponses: Schema.Number,
  prevMentions: Schema.Number
})
export type EngineTotals = typeof EngineTotals.Type

export const SeriesDay = Schema.Struct({ day: Schema.String, responses: Schema.Number, mentions: Schema.Number })
export type SeriesDay = typeof SeriesDay.Type

export const SeriesCompetitorDay = Schema.Struct({ day: Schema.String, entityId: Schema.Number, mentions: Schema.Number })
export type SeriesCompetitorDay = typeof SeriesCompetitorDay.Type

const LastObservedRow = Schema.Struct({ at: Schema.NullOr(Schema.DateFromSelf) })

export interface VisibilityRepoShape {
  readonly promptList: (
    accountId: number,
    brandId: number
  ) => Effect.Effect<{ readonly prompts: ReadonlyArray<PromptListRow>; readonly usedTotal: number; readonly limit: number }>
  /** Monitored prompts of the account: themes (topic, prompts) and every prompt text. */
  readonly topics: (
    accountId: number
  ) => Effect.Effect<{ readonly themes: ReadonlyArray<ThemeRow>; readonly texts: ReadonlyArray<string> }>
  /** observation_daily per day and engine, every region. */
  readonly dayEngineTotals: (accountId: number, brandId: number, from: string, to: string) => Effect.Effect<ReadonlyArray<DayEngineTotals>>
  /** mention_daily per day and entity (per engine for the brand, entity 0), every region. */
  readonly dayEntityTotals: (accountId: number, brandId: number, from: string, to: string) => Effect.Effect<ReadonlyArray<DayEntityTotals>>
  readonly mentions: (
    accountId: number,
    brandId: number,
    filter: { readonly from: string; readonly to: string; readonly region: string; readonly language: string; readonly label: string | null; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<MentionRow>>
  /** Per brand of the account and engine: responses and brand mentions in the range, the last 7 days and the 7 before. */
  readonly portfolioEngines: (
    accountId: number,
    days: { readonly from: string; readonly to: string; readonly last7From: string; readonly prev7From: string }
  ) => Effect.Effect<ReadonlyArray<PortfolioEngineRow>>
  /** Per brand of the account and competitor: mentions in the range. */
  readonly portfolioCompetitors: (
    accountId: number,
    from: string,
    to: string
  ) => Effect.Effect<ReadonlyArray<PortfolioCompetitorRow>>
  /** Per engine: responses and brand mentions in the range and the previous period (every region). */
  readonly engineTotals: (
    accountId: number,
    brandId: number,
    period: Period
  ) => Effect.Effect<ReadonlyArray<EngineTotals>>
  /** Answer citations per domain over the account's brands. */
  readonly workspaceDomains: (accountId: number, from: string, to: string) => Effect.Effect<ReadonlyArray<DomainTotals>>
  /** The same for one brand's answers (buckets relative to that brand). */
  readonly brandDomains: (accountId: number, brandId: number, from: string, to: string) => Effect.Effect<ReadonlyArray<DomainTotals>>
  /**
   * The first `limit` fan-out groups (prompt, engine) of the account in the range, in the order of
   * brands (oldest first), prompts (oldest first) and engines, each with the sub-questions of its
   * latest decomposition; rows are one per sub-question.
   */
  readonly fanoutGroups: (accountId: number, from: string, to: string, limit: number) => Effect.Effect<ReadonlyArray<FanoutRow>>
  /** Per entity: mentions in the range and the previous period; the population's responses. */
  readonly entityTotals: (
    accountId: number,
    brandId: number,
    period: Period,
    scope: Scope
  ) => Effect.Effect<{ readonly entities: ReadonlyArray<EntityPeriodTotals>; readonly population: PopulationTotals }>
  /**
   * The same over the observations of the prompts with one topic: every region and engine from the prompt
   * rollups (0004), an engine or region in the scope from those per engine and region (0025); every language.
   */
  readonly topicEntityTotals: (
    accountId: number,
    brandId: number,
    period: Period,
    topic: string,
    scope: Scope
  ) => Effect.Effect<{ readonly entities: ReadonlyArray<EntityPeriodTotals>; readonly population: PopulationTotals }>
  /** Per day: responses, brand mentions and mentions per competitor. */
  readonly series: (
    accountId: number,
    brandId: number,
    from: string,
    to: string,
    scope: Scope
  ) => Effect.Effect<{ readonly days: ReadonlyArray<SeriesDay>; readonly competitors: ReadonlyArray<SeriesCompetitorDay> }>
  /** Time of the newest observation in the scope and range, null when none. */
  readonly lastObserved: (accountId: number, brandId: number, from: string, to: string, scope: Scope) => Effect.Effect<Date | null>
  readonly competitorDomains: (
    accountId: number,
    brandId: number,
    competitorId: number,
    from: string,
    to: string
  ) => Effect.Effect<ReadonlyArray<DomainTotals>>
  readonly competitorPrompts: (
    accountId: number,
    brandId: number,
    competitorId: number,
    from: string,
    to: string
  ) => Effect.Effect<ReadonlyArray<CompetitorPromptRow>>
  readonly gap: (accountId: number, brandId: number, from: string, to: string, region: string | null) => Effect.Effect<ReadonlyArray<GapRow>>
  /** Per monitored prompt of the brand: answers in [from, to], and per entity the answers mentioning it (prompt rollups). */
  readonly promptEntityCounts: (accountId: number, brandId: number, from: string, to: string) => Effect.Effect<PromptEntityCounts>
  /** The same gap over the answers to the brand's prompts of one topic (the prompt rollups of migrations/0025). */
  readonly topicGap: (
    accountId: number,
    brandId: number,
    from: string,
    to: string,
    region: string | null,
    topic: string
  ) => Effect.Effect<ReadonlyArray<GapRow>>
  /** Brand mentions over responses, per engine and overall, in [currentFrom, until] and [previousFrom, currentFrom) (UTC days). */
  readonly mentionCounts: (
    accountId: number,
    brandId: number,
    previousFrom: string,
    currentFrom: string,
    until: string
  ) => Effect.Effect<ReadonlyArray<MentionCounts>>
  /** Owned-domain citations per (domain, engine) that started in [currentFrom, until] or stopped after [previousFrom, currentFrom). */
  readonly citationChanges: (
    accountId: number,
    brandId: number,
    previousFrom: string,
    currentFrom: string,
    until: string
  ) => Effect.Effect<ReadonlyArray<CitationChange>>
}

export class VisibilityRepo extends Context.Tag("VisibilityRepo")<VisibilityRepo, VisibilityRepoShape>() {}

/** One bucket per domain when rows disagree (a domain owned by one brand, earned for another): the first of these. */
const BUCKET_OF = `(array['owned', 'competitor', 'ugc', 'reference', 'earned'])[min(case bucket when 'owned' then 1
  when 'competitor' then 2 when 'ugc' then 3 when 'reference' then 4 else 5 end)]`

export const VisibilityRepoLive = Layer.effect(
  VisibilityRepo,
  Effect.gen(function*() {
    // Plans for the values of each read: several visibility reads are much slower on a generic plan,
    // which the requests' own connections keep (CustomPlanSql).
    const sql = yield* CustomPlanSql
    const bucketOf = sql.literal(BUCKET_OF)

    /** Region, language and engine conditions of a scope (on a rollup with those columns). */
    const scoped = (scope: Scope) =>
      sql.and([
        ...(scope.region === null ? [] : [sql`region = ${scope.region}`]),
        ...(scope.language === null ? [] : [sql`language = ${scope.language}`]),
        ...(scope.engine === null ? [] : [sql`engine = ${scope.engine}`]),
        sql`true`
      ])

    /**
     * The sums of EntityPeriodTotals and of PopulationTotals over daily rollup rows aliased `r`: the period from
     * p.from on, and the previous one before it. One list for every rollup the totals are read from.
     */
    const entityPeriodSums = (p: Period) => sql`
                 coalesce(sum(r.mentions) filter (where r.day >= ${p.from}::date), 0)::int as mentions,
                 coalesce(sum(r.mentions) filter (where r.day < ${p.from}::date), 0)::int as "prevMentions",
                 coalesce(sum(r.co_mentions) filter (where r.day >= ${p.from}::date), 0)::int as "coMentions",
                 coalesce(sum(r.co_mentions) filter (where r.day < ${p.from}::date), 0)::int as "prevCoMentions",
                 coalesce(sum(r.rank_sum) filter (where r.day >= ${p.from}::date), 0)::int as "rankSum",
                 coalesce(sum(r.positive) filter (where r.day >= ${p.from}::date), 0)::int as positive,
                 coalesce(sum(r.neutral) filter (where r.day >= ${p.from}::date), 0)::int as neutral,
                 coalesce(sum(r.negative) filter (where r.day >= ${p.from}::date), 0)::int as negative`
    const populationSums = (p: Period) => sql`
                 coalesce(sum(r.responses) filter (where r.day >= ${p.from}::date), 0)::int as responses,
                 coalesce(sum(r.responses) filter (where r.day < ${p.from}::date), 0)::int as "prevResponses",
                 coalesce(sum(r.entity_mentions) filter (where r.day >= ${p.from}::date), 0)::int as "entityMentions",
                 coalesce(sum(r.entity_mentions_sq) filter (where r.day >= ${p.from}::date), 0)::int as "entityMentionsSq",
                 coalesce(sum(r.entity_mentions) filter (where r.day < ${p.from}::date), 0)::int as "prevEntityMentions",
                 coalesce(sum(r.entity_mentions_sq) filter (where r.day < ${p.from}::date), 0)::int as "prevEntityMentionsSq",
                 coalesce(sum(r.entity_observations) filter (where r.day >= ${p.from}::date), 0)::int as "entityObservations",
                 coalesce(sum(r.entity_observations) filter (where r.day < ${p.from}::date), 0)::int as "prevEntityObservations"`

    /**
     * topicEntityTotals with an engine or region: the prompt rollups per engine and region (migrations/0025).
     * They hold no language: a scope with a language is not asked of them (the ranking passes none).
     */
    const scopedTopicTotals = (accountId: number, brandId: number, p: Period, topic: string, scope: Scope) => {
      const where = sql.and([
        sql`r.account_id = ${accountId}`,
        sql`r.brand_id = ${brandId}`,
        sql`r.day between ${p.prevFrom}::date and ${p.to}::date`,
        sql`r.prompt_id in (select id from prompts where account_id = ${accountId} and brand_id = ${brandId} and topic = ${topic})`,
        ...(scope.region === null ? [] : [sql`r.region = ${scope.region}`]),
        ...(scope.engine === null ? [] : [sql`r.engine = ${scope.engine}`])
      ])
      return Effect.all({
        entities: sql`
          select r.entity_id as "entityId", ${entityPeriodSums(p)}
          from prompt_entity_scope_daily r
          where ${where}
          group by r.entity_id`.pipe(rows(EntityPeriodTotals)),
        population: sql`
          select ${populationSums(p)}
          from prompt_scope_daily r
          where ${where}`.pipe(firstRow(PopulationTotals))
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ entities, population }) => ({ entities, population: Option.getOrElse(population, () => NO_POPULATION) })),
        Effect.orDie
      )
    }

    const repo: VisibilityRepoShape = {
      promptList: (accountId, brandId) =>
        Effect.all({
          prompts: sql`
            select id::text as id, num, prompt, topic, intent, source, source_query as "sourceQuery", created_at as "createdAt"
            from prompts where account_id = ${accountId} and brand_id = ${brandId} order by created_at, num`.pipe(rows(PromptRow)),
          totals: sql`
            select (select count(*)::int from prompts where account_id = a.id) as "usedTotal", p.max_prompts as "limit"
            from accounts a join plans p on p.id = a.plan_id where a.id = ${accountId}`.pipe(firstRow(PromptTotalsRow))
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ prompts, totals }) => ({
            prompts,
            ...Option.getOrElse(totals, () => ({ usedTotal: 0, limit: 0 }))
          })),
          Effect.orDie
        ),

      topics: (accountId) =>
        Effect.all({
          themes: sql`
            select topic, count(*)::int as count from prompts where account_id = ${accountId}
            group by topic order by count(*) desc, topic`.pipe(rows(ThemeRow)),
          texts: sql`select prompt from prompts where account_id = ${accountId}`.pipe(rows(PromptTextRow))
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ texts, themes }) => ({ themes, texts: texts.map((row) => row.prompt) })),
          Effect.orDie
        ),

      dayEngineTotals: (accountId, brandId, from, to) =>
        sql`
          select to_char(day, 'YYYY-MM-DD') as day, engine, sum(responses)::int as responses,
                 sum(brand_mentions)::int as mentions, sum(brand_cited)::int as cited
          from observation_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
          group by day, engine order by day, engine`.pipe(rows(DayEngineTotals), Effect.orDie),

      dayEntityTotals: (accountId, brandId, from, to) =>
        sql`
          select to_char(day, 'YYYY-MM-DD') as day, entity_id as "entityId", case when entity_id = 0 then engine end as engine,
                 sum(mentions)::int as mentions, sum(rank_sum)::int as "rankSum", sum(top1)::int as top1, sum(top3)::int as top3,
                 sum(sentiment_sum)::float8 as "sentimentSum", sum(positive)::int as positive, sum(neutral)::int as neutral,
                 sum(negative)::int as negative
          from mention_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
          group by day, entity_id, case when entity_id = 0 then engine end
          order by day, entity_id, engine`.pipe(rows(DayEntityTotals), Effect.orDie),

      mentions: (accountId, brandId, f) =>
        sql`
          select m.id::text as id, m.engine, p.prompt, m.snippet, m.rank, m.sentiment_label as label, m.cited_url as "citedUrl",
                 m.observed_at as "seenAt"
          from mentions m join prompts p on p.id = m.prompt_id
          where m.account_id = ${accountId} and m.brand_id = ${brandId} and m.competitor_id is null
            and m.day between ${f.from}::date and ${f.to}::date
            and m.region = ${f.region} and m.language = ${f.language}
            ${f.label === null ? sql`` : sql`and m.sentiment_label = ${f.label}`}
          order by m.observed_at desc, m.id desc
          limit ${f.limit}`.pipe(rows(MentionRow), Effect.orDie),

      portfolioEngines: (accountId, d) =>
        sql`
          select brand_id as "brandId", engine,
                 coalesce(sum(responses) filter (where day >= ${d.from}::date), 0)::int as responses,
                 coalesce(sum(brand_mentions) filter (where day >= ${d.from}::date), 0)::int as mentions,
                 coalesce(sum(responses) filter (where day >= ${d.last7From}::date), 0)::int as responses7,
                 coalesce(sum(brand_mentions) filter (where day >= ${d.last7From}::date), 0)::int as mentions7,
                 coalesce(sum(responses) filter (where day >= ${d.prev7From}::date and day < ${d.last7From}::date), 0)::int
                   as "responsesPrev7",
                 coalesce(sum(brand_mentions) filter (where day >= ${d.prev7From}::date and day < ${d.last7From}::date), 0)::int
                   as "mentionsPrev7"
          from observation_daily
          where account_id = ${accountId} and day between least(${d.from}::date, ${d.prev7From}::date) and ${d.to}::date
          group by brand_id, engine`.pipe(rows(PortfolioEngineRow), Effect.orDie),

      portfolioCompetitors: (accountId, from, to) =>
        sql`
          select t.brand_id as "brandId", c.name, t.mentions
          from (select brand_id, entity_id, sum(mentions)::int as mentions from mention_daily
                where account_id = ${accountId} and entity_id <> 0 and day between ${from}::date and ${to}::date
                group by brand_id, entity_id) t
          join competitors c on c.id = t.entity_id and c.account_id = ${accountId}`.pipe(rows(PortfolioCompetitorRow), Effect.orDie),

      engineTotals: (accountId, brandId, p) =>
        sql`
          select engine,
                 coalesce(sum(responses) filter (where day >= ${p.from}::date), 0)::int as responses,
                 coalesce(sum(brand_mentions) filter (where day >= ${p.from}::date), 0)::int as mentions,
                 coalesce(sum(responses) filter (where day < ${p.from}::date), 0)::int as "prevResponses",
                 coalesce(sum(brand_mentions) filter (where day < ${p.from}::date), 0)::int as "prevMentions"
          from observation_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day between ${p.prevFrom}::date and ${p.to}::date
          group by engine`.pipe(rows(EngineTotals), Effect.orDie),

      workspaceDomains: (accountId, from, to) =>
        sql`
          select domain, ${bucketOf} as bucket, sum(citations)::int as citations
          from domain_daily
          where account_id = ${accountId} and day between ${from}::date and ${to}::date
          group by domain order by sum(citations) desc, domain`.pipe(rows(DomainTotals), Effect.orDie),

      brandDomains: (accountId, brandId, from, to) =>
        sql`
          select domain, ${bucketOf} as bucket, sum(citations)::int as citations
          from domain_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
          group by domain order by sum(citations) desc, domain`.pipe(rows(DomainTotals), Effect.orDie),

      fanoutGroups: (accountId, from, to, limit) =>
        sql`
          with groups as (
            select b.slug as brand_slug, b.name as brand_name, p.num, p.prompt, e.engine, latest.observation_id, latest.day,
                   b.added_at, b.id as brand_id
            from brands b
            join prompts p on p.brand_id = b.id and p.account_id = ${accountId}
            cross join unnest(${["ai_mode", "ai_overview", "chatgpt", "claude", "copilot", "deepseek", "gemini", "grok", "perplexity"]}::text[]) as e(engine)
            cross join lateral (
              select f.observation_id, f.day from fanouts f join observations o on o.id = f.observation_id
              where f.prompt_id = p.id and f.engine = e.engine and f.position = 1 and f.account_id = ${accountId}
                and f.day between ${from}::date and ${to}::date
              order by f.day desc, o.observed_at desc, o.id desc
              limit 1
            ) latest
            where b.account_id = ${accountId}
            order by b.added_at, b.id, p.created_at, p.num, e.engine
            limit ${limit}
          )
          select g.observation_id as "observationId", g.num as "promptNum", g.prompt as "promptText", g.brand_slug as "brandSlug",
                 g.brand_name as "brandName", g.engine, to_char(g.day, 'YYYY-MM-DD') as day, f.position, f.sub_question as "subQuestion",
                 -- The account first: the key of fanout_citations is (account_id, fanout_id, position).
                 (select array_agg(fc.url order by fc.position) from fanout_citations fc
                  where fc.account_id = ${accountId} and fc.fanout_id = f.id) as citations
          from groups g
          join fanouts f on f.observation_id = g.observation_id and f.account_id = ${accountId}
          order by g.added_at, g.brand_id, g.num, g.engine, f.position`.pipe(rows(FanoutRow), Effect.orDie),

      entityTotals: (accountId, brandId, p, scope) =>
        Effect.all({
          entities: sql`
            select r.entity_id as "entityId", ${entityPeriodSums(p)}
            from mention_daily r
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${p.prevFrom}::date and ${p.to}::date
              and ${scoped(scope)}
            group by entity_id`.pipe(rows(EntityPeriodTotals)),
          population: sql`
            select ${populationSums(p)}
            from observation_daily r
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${p.prevFrom}::date and ${p.to}::date
              and ${scoped(scope)}`.pipe(firstRow(PopulationTotals))
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ entities, population }) => ({ entities, population: Option.getOrElse(population, () => NO_POPULATION) })),
          Effect.orDie
        ),

      topicEntityTotals: (accountId, brandId, p, topic, scope) =>
        scope.engine !== null || scope.region !== null
          ? scopedTopicTotals(accountId, brandId, p, topic, scope)
          : Effect.all({
          entities: sql`
            select r.entity_id as "entityId", ${entityPeriodSums(p)}
            from prompt_entity_daily r
            join prompts p on p.id = r.prompt_id and p.account_id = ${accountId} and p.brand_id = ${brandId} and p.topic = ${topic}
            where r.account_id = ${accountId} and r.brand_id = ${brandId} and r.day between ${p.prevFrom}::date and ${p.to}::date
            group by r.entity_id`.pipe(rows(EntityPeriodTotals)),
          population: sql`
            select ${populationSums(p)}
            from prompt_daily r
            join prompts p on p.id = r.prompt_id and p.account_id = ${accountId} and p.brand_id = ${brandId} and p.topic = ${topic}
            where r.account_id = ${accountId} and r.brand_id = ${brandId} and r.day between ${p.prevFrom}::date and ${p.to}::date`.pipe(firstRow(PopulationTotals))
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ entities, population }) => ({ entities, population: Option.getOrElse(population, () => NO_POPULATION) })),
          Effect.orDie
        ),

      series: (accountId, brandId, from, to, scope) =>
        Effect.all({
          days: sql`
            select to_char(day, 'YYYY-MM-DD') as day, sum(responses)::int as responses, sum(brand_mentions)::int as mentions
            from observation_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
              and ${scoped(scope)}
            group by day order by day`.pipe(rows(SeriesDay)),
          competitors: sql`
            select to_char(day, 'YYYY-MM-DD') as day, entity_id as "entityId", sum(mentions)::int as mentions
            from mention_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
              and entity_id <> 0 and ${scoped(scope)}
            group by day, entity_id`.pipe(rows(SeriesCompetitorDay))
        }, { concurrency: "unbounded" }).pipe(Effect.orDie),

      lastObserved: (accountId, brandId, from, to, scope) =>
        sql`
          select max(observed_at) as at from observations
          where account_id = ${accountId} and brand_id = ${brandId}
            and day = (select max(day) from observation_daily
                       where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
                         and ${scoped(scope)})
            and ${scoped(scope)}`.pipe(
          firstRow(LastObservedRow),
          Effect.map(Option.match({ onNone: () => null, onSome: (row) => row.at })),
          Effect.orDie
        ),

      competitorDomains: (accountId, brandId, competitorId, from, to) =>
        sql`
          select domain, ${bucketOf} as bucket, sum(citations)::int as citations
          from domain_entity_daily
          where account_id = ${accountId} and brand_id = ${brandId} and entity_id = ${competitorId}
            and day between ${from}::date and ${to}::date
          group by domain order by sum(citations) desc, domain`.pipe(rows(DomainTotals), Effect.orDie),

      competitorPrompts: (accountId, brandId, competitorId, from, to) =>
        sql`
          select p.num as "promptNum", p.prompt, p.topic, t.appearances, t.engines, t."rankSum", t."withBrand"
          from (select prompt_id, sum(mentions)::int as appearances, bit_or(engines) as engines,
                       sum(rank_sum)::int as "rankSum", sum(with_brand)::int as "withBrand"
                from prompt_entity_daily
                where account_id = ${accountId} and brand_id = ${brandId} and entity_id = ${competitorId}
                  and day between ${from}::date and ${to}::date
                group by prompt_id) t
          join prompts p on p.id = t.prompt_id and p.account_id = ${accountId}
          order by t.appearances desc, p.num`.pipe(rows(CompetitorPromptRow), Effect.orDie),

      gap: (accountId, brandId, from, to, region) =>
        sql`
          with gap as (
            select domain, ${bucketOf} as bucket, sum(competitor_observations)::int as opportunity
            from domain_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
              ${region === null ? sql`` : sql`and region = ${region}`}
            group by domain
            having sum(brand_observations) = 0 and sum(competitor_observations) > 0
          )
          select g.domain, g.bucket, g.opportunity,
                 coalesce((select array_agg(distinct e.entity_id order by e.entity_id) from domain_entity_daily e
                           where e.account_id = ${accountId} and e.brand_id = ${brandId} and e.domain = g.domain
                             and e.day between ${from}::date and ${to}::date
                             ${region === null ? sql`` : sql`and e.region = ${region}`}), '{}') as "competitorIds"
          from gap g`.pipe(rows(GapRow), Effect.orDie),
      promptEntityCounts: (accountId, brandId, from, to) =>
        Effect.all({
          prompts: sql`
            select p.id::text as "promptId", p.prompt, t.responses
            from (select prompt_id, sum(responses)::int as responses from prompt_daily
                  where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
                  group by prompt_id) t
            join prompts p on p.account_id = ${accountId} and p.id = t.prompt_id and p.brand_id = ${brandId}`.pipe(rows(PromptAnswersRow)),
          entities: sql`
            select prompt_id::text as "promptId", entity_id as "entityId", sum(mentions)::int as mentions
            from prompt_entity_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
            group by prompt_id, entity_id`.pipe(rows(PromptEntityRow))
        }, { concurrency: "unbounded" }).pipe(Effect.orDie),
      topicGap: (accountId, brandId, from, to, region, topic) =>
        sql`
          with topic_prompts as materialized (
            select id from prompts where account_id = ${accountId} and brand_id = ${brandId} and topic = ${topic}
          ),
          gap as (
            select domain, ${bucketOf} as bucket, sum(competitor_observations)::int as opportunity
            from prompt_domain_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
              and prompt_id in (select id from topic_prompts)
              ${region === null ? sql`` : sql`and region = ${region}`}
            group by domain
            having sum(brand_observations) = 0 and sum(competitor_observations) > 0
          ),
          pairs as (
            select e.domain, array_agg(distinct e.entity_id order by e.entity_id) as ids
            from prompt_domain_entity_daily e
            where e.account_id = ${accountId} and e.brand_id = ${brandId} and e.day between ${from}::date and ${to}::date
              and e.prompt_id in (select id from topic_prompts)
              ${region === null ? sql`` : sql`and e.region = ${region}`}
              and e.domain in (select domain from gap)
            group by e.domain
          )
          select g.domain, g.bucket, g.opportunity, coalesce(p.ids, '{}') as "competitorIds"
          from gap g left join pairs p on p.domain = g.domain`.pipe(rows(GapRow), Effect.orDie),
      mentionCounts: (accountId, brandId, previousFrom, currentFrom, until) =>
        sql`
          select engine,
                 (coalesce(sum(responses) filter (where day >= ${currentFrom}::date), 0))::int as "currentN",
                 (coalesce(sum(brand_mentions) filter (where day >= ${currentFrom}::date), 0))::int as "currentK",
                 (coalesce(sum(responses) filter (where day < ${currentFrom}::date), 0))::int as "previousN",
                 (coalesce(sum(brand_mentions) filter (where day < ${currentFrom}::date), 0))::int as "previousK"
          from observation_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day >= ${previousFrom}::date and day <= ${until}::date
          group by grouping sets ((engine), ())`.pipe(rows(MentionCounts), Effect.orDie),
      citationChanges: (accountId, brandId, previousFrom, currentFrom, until) =>
        sql`
          with per as (
            select domain, engine, min(day) filter (where day >= ${currentFrom}::date) as first_now,
                   max(day) filter (where day < ${currentFrom}::date) as last_before
            from citations
            where account_id = ${accountId} and brand_id = ${brandId} and bucket = 'owned'
              and day >= ${previousFrom}::date and day <= ${until}::date
            group by domain, engine
          )
          select domain, engine, case when first_now is null then 'lost' else 'gained' end as change,
                 to_char(coalesce(first_now, last_before), 'YYYY-MM-DD') as day
          from per where (first_now is null) <> (last_before is null)`.pipe(rows(CitationChange), Effect.orDie)
    }
    return repo
  })
)
