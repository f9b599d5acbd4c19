import type { PromptRow } from "../brands/Brands.js"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import type { Period } from "../platform/Days.js"
export type { Period }

/**
 * SQL of the visibility reads (docs/visibility.md). Every figure is summed in SQL from
 * the daily rollups (migrations 0003 and 0004), or, for the lists (mentions, fan-outs, prompts),
 * read row by row with a limit. Every query filters by the account of the authenticated key.
 * Days are `YYYY-MM-DD` strings (UTC days) both ways.
 */

/** A brand's mention rate in two adjacent periods (the visibility.changed alert). */
export interface MentionCounts {
  /** null: every engine together. */
  readonly engine: string | null
  readonly currentN: number
  readonly currentK: number
  readonly previousN: number
  readonly previousK: number
}

/** An owned domain an engine started or stopped citing (the citation.gained/lost alerts). */
export interface CitationChange {
  readonly domain: string
  readonly engine: string
  readonly change: "gained" | "lost"
  /** gained: the first day it cited in the current period; lost: the last day it cited before it. */
  readonly day: string
}

/** Optional filters of the per-brand aggregates (null = every value). */
export interface Scope {
  readonly region: string | null
  readonly language: string | null
  readonly engine: string | null
}

export interface DayEngineTotals {
  readonly day: string
  readonly engine: string
  readonly responses: number
  readonly mentions: number
  readonly cited: number
}

/** Mention rollup sums; `engine` is null on competitor rows (summed over engines). */
export interface DayEntityTotals {
  readonly day: string
  readonly entityId: number
  readonly engine: string | null
  readonly mentions: number
  readonly rankSum: number
  readonly top1: number
  readonly top3: number
  readonly sentimentSum: number
  readonly positive: number
  readonly neutral: number
  readonly negative: number
}

export interface MentionRow {
  readonly id: string
  readonly engine: string
  readonly prompt: string
  readonly snippet: string
  readonly rank: number
  readonly label: "positive" | "neutral" | "negative"
  readonly citedUrl: string | null
  readonly seenAt: Date
}

/** A monitored prompt as the prompts list reads it: the stored row of the brands domain. */
export type PromptListRow = PromptRow

export interface EntityPeriodTotals {
  readonly entityId: number
  readonly mentions: number
  readonly prevMentions: number
  /** Σ m over the observations mentioning the entity (m = entities an observation mentions), range / previous period. */
  readonly coMentions: number
  readonly prevCoMentions: number
  readonly rankSum: number
  readonly positive: number
  readonly neutral: number
  readonly negative: number
}

export interface PopulationTotals {
  readonly responses: number
  readonly prevResponses: number
  /** Σ m and Σ m² over the population's observations (m = entities an observation mentions), range / previous period. */
  readonly entityMentions: number
  readonly entityMentionsSq: number
  readonly prevEntityMentions: number
  readonly prevEntityMentionsSq: number
}

export const NO_POPULATION: PopulationTotals = {
  responses: 0,
  prevResponses: 0,
  entityMentions: 0,
  entityMentionsSq: 0,
  prevEntityMentions: 0,
  prevEntityMentionsSq: 0
}

export interface DomainTotals {
  readonly domain: string
  readonly bucket: string
  readonly citations: number
}

export interface FanoutRow {
  readonly observationId: number
  readonly promptNum: number
  readonly promptText: string
  readonly brandSlug: string
  readonly brandName: string
  readonly engine: string
  readonly day: string
  readonly position: number | null
  readonly subQuestion: string | null
  readonly citations: ReadonlyArray<string> | null
}

export interface CompetitorPromptRow {
  readonly promptNum: number
  readonly prompt: string
  readonly topic: string
  readonly appearances: number
  /** Bit set of ENGINE_SLUGS indexes (migrations/0004). */
  readonly engines: number
  readonly rankSum: number
  readonly withBrand: number
}

export interface GapRow {
  readonly domain: string
  readonly bucket: string
  readonly opportunity: number
  readonly competitorIds: ReadonlyArray<number>
}

export interface VisibilityRepoShape {
  readonly promptList: (
    accountId: number,
    brandId: number
  ) => Effect.Effect<{ readonly prompts: ReadonlyArray<PromptListRow>; readonly usedTotal: number; readonly limit: number }>
  /** Monitored prompts of the account: themes (topic, prompts) and every prompt text. */
  readonly topics: (
    accountId: number
  ) => Effect.Effect<{ readonly themes: ReadonlyArray<{ readonly topic: string; readonly count: number }>; readonly texts: ReadonlyArray<string> }>
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
  ) => Effect.Effect<ReadonlyArray<{
    readonly brandId: number
    readonly engine: string
    readonly responses: number
    readonly mentions: number
    readonly responses7: number
    readonly mentions7: number
    readonly responsesPrev7: number
    readonly mentionsPrev7: number
  }>>
  /** Per brand of the account and competitor: mentions in the range. */
  readonly portfolioCompetitors: (
    accountId: number,
    from: string,
    to: string
  ) => Effect.Effect<ReadonlyArray<{ readonly brandId: number; readonly name: string; readonly mentions: number }>>
  /** Per engine: responses and brand mentions in the range and the previous period (every region). */
  readonly engineTotals: (
    accountId: number,
    brandId: number,
    period: Period
  ) => Effect.Effect<ReadonlyArray<{ readonly engine: string; readonly responses: number; readonly mentions: number; readonly prevResponses: number; readonly prevMentions: number }>>
  /** Answer citations per domain over the account's brands. */
  readonly workspaceDomains: (accountId: number, from: string, to: string) => Effect.Effect<ReadonlyArray<DomainTotals>>
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
  /** The same over the observations of the prompts with one topic (every region and engine). */
  readonly topicEntityTotals: (
    accountId: number,
    brandId: number,
    period: Period,
    topic: string
  ) => Effect.Effect<{ readonly entities: ReadonlyArray<EntityPeriodTotals>; readonly population: PopulationTotals }>
  /** Per day: responses, brand mentions and mentions per competitor. */
  readonly series: (
    accountId: number,
    brandId: number,
    from: string,
    to: string,
    scope: Scope
  ) => Effect.Effect<{
    readonly days: ReadonlyArray<{ readonly day: string; readonly responses: number; readonly mentions: number }>
    readonly competitors: ReadonlyArray<{ readonly day: string; readonly entityId: number; readonly mentions: number }>
  }>
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
    const sql = yield* SqlClient.SqlClient
    const bucketOf = sql.literal(BUCKET_OF)

    /** Region, language and engine conditions of a scope (on a rollup with those columns). */
    const scoped = (scope: Scope) =>
      sql.and([
        ...(scope.region === null ? [] : [sql`region = ${scope.region}`]),
        ...(scope.language === null ? [] : [sql`language = ${scope.language}`]),
        ...(scope.engine === null ? [] : [sql`engine = ${scope.engine}`]),
        sql`true`
      ])

    const repo: VisibilityRepoShape = {
      promptList: (accountId, brandId) =>
        Effect.all({
          prompts: sql<PromptListRow>`
            select id::text as id, num, prompt, topic, intent, source, source_query as "sourceQuery", created_at as "createdAt"
            from prompts where account_id = ${accountId} and brand_id = ${brandId} order by created_at, num`,
          totals: sql<{ usedTotal: number; limit: number }>`
            select (select count(*)::int from prompts where account_id = a.id) as "usedTotal", p.max_prompts as "limit"
            from accounts a join plans p on p.id = a.plan_id where a.id = ${accountId}`
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ prompts, totals }) => ({ prompts, usedTotal: totals[0]?.usedTotal ?? 0, limit: totals[0]?.limit ?? 0 })),
          Effect.orDie
        ),

      topics: (accountId) =>
        Effect.all({
          themes: sql<{ topic: string; count: number }>`
            select topic, count(*)::int as count from prompts where account_id = ${accountId}
            group by topic order by count(*) desc, topic`,
          texts: sql<{ prompt: string }>`select prompt from prompts where account_id = ${accountId}`
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ texts, themes }) => ({ themes, texts: texts.map((row) => row.prompt) })),
          Effect.orDie
        ),

      dayEngineTotals: (accountId, brandId, from, to) =>
        sql<DayEngineTotals>`
          select to_char(day, 'YYYY-MM-DD') as day, engine, sum(responses)::int as responses,
                 sum(brand_mentions)::int as mentions, sum(brand_cited)::int as cited
          from observation_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
          group by day, engine order by day, engine`.pipe(Effect.orDie),

      dayEntityTotals: (accountId, brandId, from, to) =>
        sql<DayEntityTotals>`
          select to_char(day, 'YYYY-MM-DD') as day, entity_id as "entityId", case when entity_id = 0 then engine end as engine,
                 sum(mentions)::int as mentions, sum(rank_sum)::int as "rankSum", sum(top1)::int as top1, sum(top3)::int as top3,
                 sum(sentiment_sum)::float8 as "sentimentSum", sum(positive)::int as positive, sum(neutral)::int as neutral,
                 sum(negative)::int as negative
          from mention_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
          group by day, entity_id, case when entity_id = 0 then engine end
          order by day, entity_id, engine`.pipe(Effect.orDie),

      mentions: (accountId, brandId, f) =>
        sql<MentionRow>`
          select m.id::text as id, m.engine, p.prompt, m.snippet, m.rank, m.sentiment_label as label, m.cited_url as "citedUrl",
                 m.observed_at as "seenAt"
          from mentions m join prompts p on p.id = m.prompt_id
          where m.account_id = ${accountId} and m.brand_id = ${brandId} and m.competitor_id is null
            and m.day between ${f.from}::date and ${f.to}::date
            and m.region = ${f.region} and m.language = ${f.language}
            ${f.label === null ? sql`` : sql`and m.sentiment_label = ${f.label}`}
          order by m.observed_at desc, m.id desc
          limit ${f.limit}`.pipe(Effect.orDie),

      portfolioEngines: (accountId, d) =>
        sql<{
          brandId: number
          engine: string
          responses: number
          mentions: number
          responses7: number
          mentions7: number
          responsesPrev7: number
          mentionsPrev7: number
        }>`
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
          group by brand_id, engine`.pipe(Effect.orDie),

      portfolioCompetitors: (accountId, from, to) =>
        sql<{ brandId: number; name: string; mentions: number }>`
          select t.brand_id as "brandId", c.name, t.mentions
          from (select brand_id, entity_id, sum(mentions)::int as mentions from mention_daily
                where account_id = ${accountId} and entity_id <> 0 and day between ${from}::date and ${to}::date
                group by brand_id, entity_id) t
          join competitors c on c.id = t.entity_id and c.account_id = ${accountId}`.pipe(Effect.orDie),

      engineTotals: (accountId, brandId, p) =>
        sql<{ engine: string; responses: number; mentions: number; prevResponses: number; prevMentions: number }>`
          select engine,
                 coalesce(sum(responses) filter (where day >= ${p.from}::date), 0)::int as responses,
                 coalesce(sum(brand_mentions) filter (where day >= ${p.from}::date), 0)::int as mentions,
                 coalesce(sum(responses) filter (where day < ${p.from}::date), 0)::int as "prevResponses",
                 coalesce(sum(brand_mentions) filter (where day < ${p.from}::date), 0)::int as "prevMentions"
          from observation_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day between ${p.prevFrom}::date and ${p.to}::date
          group by engine`.pipe(Effect.orDie),

      workspaceDomains: (accountId, from, to) =>
        sql<DomainTotals>`
          select domain, ${bucketOf} as bucket, sum(citations)::int as citations
          from domain_daily
          where account_id = ${accountId} and day between ${from}::date and ${to}::date
          group by domain order by sum(citations) desc, domain`.pipe(Effect.orDie),

      fanoutGroups: (accountId, from, to, limit) =>
        sql<FanoutRow>`
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
                 (select array_agg(fc.url order by fc.position) from fanout_citations fc where fc.fanout_id = f.id) as citations
          from groups g
          join fanouts f on f.observation_id = g.observation_id and f.account_id = ${accountId}
          order by g.added_at, g.brand_id, g.num, g.engine, f.position`.pipe(Effect.orDie),

      entityTotals: (accountId, brandId, p, scope) =>
        Effect.all({
          entities: sql<EntityPeriodTotals>`
            select entity_id as "entityId",
                   coalesce(sum(mentions) filter (where day >= ${p.from}::date), 0)::int as mentions,
                   coalesce(sum(mentions) filter (where day < ${p.from}::date), 0)::int as "prevMentions",
                   coalesce(sum(co_mentions) filter (where day >= ${p.from}::date), 0)::int as "coMentions",
                   coalesce(sum(co_mentions) filter (where day < ${p.from}::date), 0)::int as "prevCoMentions",
                   coalesce(sum(rank_sum) filter (where day >= ${p.from}::date), 0)::int as "rankSum",
                   coalesce(sum(positive) filter (where day >= ${p.from}::date), 0)::int as positive,
                   coalesce(sum(neutral) filter (where day >= ${p.from}::date), 0)::int as neutral,
                   coalesce(sum(negative) filter (where day >= ${p.from}::date), 0)::int as negative
            from mention_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${p.prevFrom}::date and ${p.to}::date
              and ${scoped(scope)}
            group by entity_id`,
          population: sql<PopulationTotals>`
            select coalesce(sum(responses) filter (where day >= ${p.from}::date), 0)::int as responses,
                   coalesce(sum(responses) filter (where day < ${p.from}::date), 0)::int as "prevResponses",
                   coalesce(sum(entity_mentions) filter (where day >= ${p.from}::date), 0)::int as "entityMentions",
                   coalesce(sum(entity_mentions_sq) filter (where day >= ${p.from}::date), 0)::int as "entityMentionsSq",
                   coalesce(sum(entity_mentions) filter (where day < ${p.from}::date), 0)::int as "prevEntityMentions",
                   coalesce(sum(entity_mentions_sq) filter (where day < ${p.from}::date), 0)::int as "prevEntityMentionsSq"
            from observation_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${p.prevFrom}::date and ${p.to}::date
              and ${scoped(scope)}`
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ entities, population }) => ({ entities, population: population[0] ?? NO_POPULATION })),
          Effect.orDie
        ),

      topicEntityTotals: (accountId, brandId, p, topic) =>
        Effect.all({
          entities: sql<EntityPeriodTotals>`
            select r.entity_id as "entityId",
                   coalesce(sum(r.mentions) filter (where r.day >= ${p.from}::date), 0)::int as mentions,
                   coalesce(sum(r.mentions) filter (where r.day < ${p.from}::date), 0)::int as "prevMentions",
                   coalesce(sum(r.co_mentions) filter (where r.day >= ${p.from}::date), 0)::int as "coMentions",
                   coalesce(sum(r.co_mentions) filter (where r.day < ${p.from}::date), 0)::int as "prevCoMentions",
                   coalesce(sum(r.rank_sum) filter (where r.day >= ${p.from}::date), 0)::int as "rankSum",
                   coalesce(sum(r.positive) filter (where r.day >= ${p.from}::date), 0)::int as positive,
                   coalesce(sum(r.neutral) filter (where r.day >= ${p.from}::date), 0)::int as neutral,
                   coalesce(sum(r.negative) filter (where r.day >= ${p.from}::date), 0)::int as negative
            from prompt_entity_daily r
            join prompts p on p.id = r.prompt_id and p.account_id = ${accountId} and p.brand_id = ${brandId} and p.topic = ${topic}
            where r.account_id = ${accountId} and r.brand_id = ${brandId} and r.day between ${p.prevFrom}::date and ${p.to}::date
            group by r.entity_id`,
          population: sql<PopulationTotals>`
            select coalesce(sum(r.responses) filter (where r.day >= ${p.from}::date), 0)::int as responses,
                   coalesce(sum(r.responses) filter (where r.day < ${p.from}::date), 0)::int as "prevResponses",
                   coalesce(sum(r.entity_mentions) filter (where r.day >= ${p.from}::date), 0)::int as "entityMentions",
                   coalesce(sum(r.entity_mentions_sq) filter (where r.day >= ${p.from}::date), 0)::int as "entityMentionsSq",
                   coalesce(sum(r.entity_mentions) filter (where r.day < ${p.from}::date), 0)::int as "prevEntityMentions",
                   coalesce(sum(r.entity_mentions_sq) filter (where r.day < ${p.from}::date), 0)::int as "prevEntityMentionsSq"
            from prompt_daily r
            join prompts p on p.id = r.prompt_id and p.account_id = ${accountId} and p.brand_id = ${brandId} and p.topic = ${topic}
            where r.account_id = ${accountId} and r.brand_id = ${brandId} and r.day between ${p.prevFrom}::date and ${p.to}::date`
        }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ entities, population }) => ({ entities, population: population[0] ?? NO_POPULATION })),
          Effect.orDie
        ),

      series: (accountId, brandId, from, to, scope) =>
        Effect.all({
          days: sql<{ day: string; responses: number; mentions: number }>`
            select to_char(day, 'YYYY-MM-DD') as day, sum(responses)::int as responses, sum(brand_mentions)::int as mentions
            from observation_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
              and ${scoped(scope)}
            group by day order by day`,
          competitors: sql<{ day: string; entityId: number; mentions: number }>`
            select to_char(day, 'YYYY-MM-DD') as day, entity_id as "entityId", sum(mentions)::int as mentions
            from mention_daily
            where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
              and entity_id <> 0 and ${scoped(scope)}
            group by day, entity_id`
        }, { concurrency: "unbounded" }).pipe(Effect.orDie),

      lastObserved: (accountId, brandId, from, to, scope) =>
        sql<{ at: Date | null }>`
          select max(observed_at) as at from observations
          where account_id = ${accountId} and brand_id = ${brandId}
            and day = (select max(day) from observation_daily
                       where account_id = ${accountId} and brand_id = ${brandId} and day between ${from}::date and ${to}::date
                         and ${scoped(scope)})
            and ${scoped(scope)}`.pipe(Effect.map((rows) => rows[0]?.at ?? null), Effect.orDie),

      competitorDomains: (accountId, brandId, competitorId, from, to) =>
        sql<DomainTotals>`
          select domain, ${bucketOf} as bucket, sum(citations)::int as citations
          from domain_entity_daily
          where account_id = ${accountId} and brand_id = ${brandId} and entity_id = ${competitorId}
            and day between ${from}::date and ${to}::date
          group by domain order by sum(citations) desc, domain`.pipe(Effect.orDie),

      competitorPrompts: (accountId, brandId, competitorId, from, to) =>
        sql<CompetitorPromptRow>`
          select p.num as "promptNum", p.prompt, p.topic, t.appearances, t.engines, t."rankSum", t."withBrand"
          from (select prompt_id, sum(mentions)::int as appearances, bit_or(engines) as engines,
                       sum(rank_sum)::int as "rankSum", sum(with_brand)::int as "withBrand"
                from prompt_entity_daily
                where account_id = ${accountId} and brand_id = ${brandId} and entity_id = ${competitorId}
                  and day between ${from}::date and ${to}::date
                group by prompt_id) t
          join prompts p on p.id = t.prompt_id and p.account_id = ${accountId}
          order by t.appearances desc, p.num`.pipe(Effect.orDie),

      gap: (accountId, brandId, from, to, region) =>
        sql<GapRow>`
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
          from gap g`.pipe(Effect.orDie),
      mentionCounts: (accountId, brandId, previousFrom, currentFrom, until) =>
        sql<MentionCounts>`
          select engine,
                 (coalesce(sum(responses) filter (where day >= ${currentFrom}::date), 0))::int as "currentN",
                 (coalesce(sum(brand_mentions) filter (where day >= ${currentFrom}::date), 0))::int as "currentK",
                 (coalesce(sum(responses) filter (where day < ${currentFrom}::date), 0))::int as "previousN",
                 (coalesce(sum(brand_mentions) filter (where day < ${currentFrom}::date), 0))::int as "previousK"
          from observation_daily
          where account_id = ${accountId} and brand_id = ${brandId} and day >= ${previousFrom}::date and day <= ${until}::date
          group by grouping sets ((engine), ())`.pipe(Effect.orDie),
      citationChanges: (accountId, brandId, previousFrom, currentFrom, until) =>
        sql<CitationChange>`
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
          from per where (first_now is null) <> (last_before is null)`.pipe(Effect.orDie)
    }
    return repo
  })
)
