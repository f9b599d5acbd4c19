import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { isoDay, monthStart } from "../platform/Days.js"
import { countOf, rows as decodeRows, singleRow } from "../platform/Rows.js"
import { ENGINE_SLUGS } from "../platform/Schemas.js"
import type { AnalysedAnswer, AnalysedCitation } from "./Analysis.js"

/** Where an observation came from. */
export type ObservationOrigin = "scan" | "import" | "demo"

/** One analysed observation, ready to store. */
export interface StoredObservation {
  readonly accountId: number
  readonly brandId: number
  readonly promptId: string
  readonly engine: string
  readonly region: string
  readonly language: string
  readonly observedAt: Date
  readonly origin: ObservationOrigin
  readonly response: string
  readonly analysis: AnalysedAnswer
  /** Tokens the engine reported for this answer (scans only). */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly costUsd: number | null } | undefined
}

/** The last scan of one brand on one engine (migrations/0012 scan_engine_status). */
export const EngineScanStatus = Schema.Struct({
  engine: Schema.String,
  scannedAt: Schema.DateFromSelf,
  observations: Schema.Number,
  failures: Schema.Number,
  lastError: Schema.NullOr(Schema.String),
  /** Failed calls per reason (migrations/0024); the column is JSON text as read. */
  failuresByReason: Schema.Record({ key: Schema.String, value: Schema.Number }),
  tokens: Schema.Number
})
/** The row as read: failures_by_reason arrives as JSON text. */
const EngineScanStatusRow = Schema.Struct({
  ...EngineScanStatus.fields,
  failuresByReason: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Number }))
})
export type EngineScanStatus = typeof EngineScanStatus.Type

/** A competitor as the analysis needs it. */
export const EntityRow = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  domain: Schema.String,
  aliases: Schema.Array(Schema.String),
  pinned: Schema.Boolean
})
export type EntityRow = typeof EntityRow.Type

export const PromptRef = Schema.Struct({ id: Schema.String, num: Schema.Number, prompt: Schema.String })
export type PromptRef = typeof PromptRef.Type

/** A brand the scanner claimed: its next scan has been moved by the plan's cadence. */
export const DueBrand = Schema.Struct({ id: Schema.Number, accountId: Schema.Number, slug: Schema.String })
export type DueBrand = typeof DueBrand.Type

export const ScanFailure = Schema.Struct({
  accountId: Schema.Number,
  brandId: Schema.Number,
  promptId: Schema.String,
  engine: Schema.String,
  attempts: Schema.Number,
  error: Schema.String,
  /** The failure reason (docs/observations.md); `unknown` for failures recorded before reasons were. */
  reason: Schema.String,
  failedAt: Schema.DateFromSelf
})
export type ScanFailure = typeof ScanFailure.Type

/** An account having a brand of some slug, named by its first user's email (an account is created with its user). */
export const SlugAccount = Schema.Struct({ accountId: Schema.Number, email: Schema.String })
export type SlugAccount = typeof SlugAccount.Type

/**
 * What the observation insert returns: the new row's id and its idempotency key (`observationKey`).
 * This and FanoutRow are decoded on the import path: 5,000 observations return 15,000 rows, which
 * decode in 6-10 ms against the cast (a micro-bench), some 0.3% of the 3.1 s import (bench/import.ts).
 */
const InsertedRow = Schema.Struct({ id: Schema.Number, key: Schema.String })
const TokensRow = Schema.Struct({ tokens: Schema.Number })
/** What the fan-out insert returns: each new fan-out's id under its observation and position. */
const FanoutRow = Schema.Struct({ id: Schema.Number, observationId: Schema.Number, position: Schema.Number })

/** The idempotency key of an observation (migrations/0003: observations_key). */
export const observationKey = (o: {
  readonly promptId: string
  readonly engine: string
  readonly region: string
  readonly language: string
  readonly observedAt: Date
}) => `${o.promptId}|${o.engine}|${o.region}|${o.language}|${o.observedAt.getTime()}`

export interface ObservationsRepoShape {
  readonly competitors: (accountId: number, brandId: number) => Effect.Effect<ReadonlyArray<EntityRow>>
  readonly prompts: (accountId: number, brandId: number) => Effect.Effect<ReadonlyArray<PromptRef>>
  /**
   * Stores observations with their mentions, citations and fan-outs, and adds them to the daily
   * rollups, in one transaction. An observation whose key is already stored is left alone and
   * not counted. Keys must be distinct within one call.
   */
  readonly insert: (rows: ReadonlyArray<StoredObservation>) => Effect.Effect<{ readonly inserted: number }>
  /** Deletes a brand's observations and rollups (the demo's refresh). */
  readonly deleteForBrand: (accountId: number, brandId: number) => Effect.Effect<void>
  readonly count: (accountId: number, brandId: number) => Effect.Effect<number>
  /** Operator look-up: the accounts (by their first user's email) having a brand with this slug. */
  readonly accountsWithSlug: (slug: string) => Effect.Effect<ReadonlyArray<SlugAccount>>
  /**
   * Claims up to `limit` brands whose next_scan_at has passed, moving next_scan_at to
   * now + the plan's scan hours in the same statement (rows locked by another claimer are skipped).
   * A brand beyond its plan's brand cap (the account's oldest brands up to the cap count) is never claimed.
   */
  readonly claimDue: (now: Date, limit: number) => Effect.Effect<ReadonlyArray<DueBrand>>
  /** Every brand (or those with this slug, in any account) for a scan run now, oldest first; nothing is claimed. */
  readonly scanTargets: (slug: string | null) => Effect.Effect<ReadonlyArray<DueBrand>>
  readonly recordFailures: (failures: ReadonlyArray<ScanFailure>) => Effect.Effect<void>
  readonly failures: (accountId: number, brandId: number) => Effect.Effect<ReadonlyArray<ScanFailure>>
  /** Tokens of the account's scanned answers in the UTC month starting on `month` (YYYY-MM-01). */
  readonly tokensInMonth: (accountId: number, month: string) => Effect.Effect<number>
  readonly recordEngineStatus: (accountId: number, brandId: number, statuses: ReadonlyArray<EngineScanStatus>) => Effect.Effect<void>
  readonly engineStatus: (accountId: number, brandId: number) => Effect.Effect<ReadonlyArray<EngineScanStatus>>
  /** A scan asked for now: the brand's next_scan_at moved to `at` unless it is sooner; the date it now holds. */
  readonly requestScan: (accountId: number, brandId: number, at: Date) => Effect.Effect<Date>
}

export class ObservationsRepo extends Context.Tag("ObservationsRepo")<ObservationsRepo, ObservationsRepoShape>() {}

/** Rollup deltas of a set of newly stored observations, keyed and sorted (a stable lock order). */
const rollups = (rows: ReadonlyArray<StoredObservation>) => {
  const daily = new Map<
    string,
    {
      o: StoredObservation
      day: string
      responses: number
      mentions: number
      cited: number
      citations: number
      entityMentions: number
      entityMentionsSq: number
      entityObservations: number
    }
  >()
  const entity = new Map<
    string,
    {
      o: StoredObservation
      day: string
      entityId: number
      mentions: number
      coMentions: number
      rankSum: number
      top1: number
      top3: number
      sentimentSum: number
      positive: number
      neutral: number
      negative: number
    }
  >()
  const domains = new Map<string, { o: StoredObservation; day: string; domain: string; bucket: string; citations: number }>()
  for (const o of rows) {
    const day = isoDay(o.observedAt)
    const base = `${o.brandId}|${day}|${o.engine}|${o.region}|${o.language}`
    const d = daily.get(base) ??
      { o, day, responses: 0, mentions: 0, cited: 0, citations: 0, entityMentions: 0, entityMentionsSq: 0, entityObservations: 0 }
    // m = the entities this observation mentions: the share-of-voice interval's sums (migrations/0012).
    const entities = o.analysis.mentions.length
    d.responses++
    d.entityMentions += entities
    d.entityMentionsSq += entities * entities
    // Observations naming at least one entity: the n of a share's interval when its variance is 0 (migrations/0024).
    if (entities > 0) d.entityObservations++
    if (o.analysis.brandMentioned) d.mentions++
    if (o.analysis.brandCited) d.cited++
    d.citations += o.analysis.citations.length
    daily.set(base, d)
    for (const m of o.analysis.mentions) {
      const entityId = m.competitorId ?? 0
      const key = `${base}|${entityId}`
      const e = entity.get(key) ??
        { o, day, entityId, mentions: 0, coMentions: 0, rankSum: 0, top1: 0, top3: 0, sentimentSum: 0, positive: 0, neutral: 0, negative: 0 }
      e.mentions++
      e.coMentions += entities
      e.rankSum += m.rank
      if (m.rank === 1) e.top1++
      if (m.rank <= 3) e.top3++
      e.sentimentSum += m.sentiment
      e[m.label]++
      entity.set(key, e)
    }
    for (const c of o.analysis.citations) {
      const key = `${base}|${c.domain}`
      const e = domains.get(key) ?? { o, day, domain: c.domain, bucket: c.bucket, citations: 0 }
      e.citations++
      domains.set(key, e)
    }
  }
  const sorted = <A>(map: Map<string, A>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v)
  return { daily: sorted(daily), entity: sorted(entity), domains: sorted(domains) }
}

/** Bit of an engine in `prompt_entity_daily.engines` (migrations/0004); 0 for a slug outside the nine. */
export const engineBit = (engine: string): number => {
  const index = (ENGINE_SLUGS as ReadonlyArray<string>).indexOf(engine)
  return index < 0 ? 0 : 1 << index
}

/**
 * Deltas of the rollups of migrations/0004 (the visibility reads): per prompt, per entity and prompt (with
 * the engines and co-mentions of the brand), per domain and region (with the observations citing it that
 * mention a competitor / the brand), per competitor and domain. Keys sorted like the others.
 */
const readRollups = (rows: ReadonlyArray<StoredObservation>) => {
  const prompt = new Map<
    string,
    { o: StoredObservation; day: string; responses: number; entityMentions: number; entityMentionsSq: number; entityObservations: number }
  >()
  const promptEntity = new Map<
    string,
    {
      o: StoredObservation
      day: string
      entityId: number
      engines: number
      mentions: number
      coMentions: number
      rankSum: number
      withBrand: number
      positive: number
      neutral: number
      negative: number
    }
  >()
  const domain = new Map<
    string,
    { o: StoredObservation; day: string; domain: string; bucket: string; citations: number; competitorObs: number; brandObs: number }
  >()
  const domainEntity = new Map<
    string,
    { o: StoredObservation; day: string; entityId: number; domain: string; bucket: string; citations: number; observations: number }
  >()
  // migrations/0025: the same per prompt (the gap of one topic).
  const promptDomain = new Map<
    string,
    { o: StoredObservation; day: string; domain: string; bucket: string; competitorObs: number; brandObs: number }
  >()
  const promptDomainEntity = new Map<string, { o: StoredObservation; day: string; entityId: number; domain: string; observations: number }>()
  // migrations/0025: prompt_daily and prompt_entity_daily per engine and region too (a topic's share in a scope).
  const promptScope = new Map<
    string,
    { o: StoredObservation; day: string; responses: number; entityMentions: number; entityMentionsSq: number; entityObservations: number }
  >()
  const promptEntityScope = new Map<
    string,
    { o: StoredObservation; day: string; entityId: number; mentions: number; coMentions: number; rankSum: number; positive: number; neutral: number; negative: number }
  >()
  for (const o of rows) {
    const day = isoDay(o.observedAt)
    const a = o.analysis
    const promptKey = `${o.brandId}|${day}|${o.promptId}`
    const p = prompt.get(promptKey) ?? { o, day, responses: 0, entityMentions: 0, entityMentionsSq: 0, entityObservations: 0 }
    const entities = a.mentions.length
    p.responses++
    p.entityMentions += entities
    p.entityMentionsSq += entities * entities
    if (entities > 0) p.entityObservations++
    prompt.set(promptKey, p)
    const scopeKey = `${promptKey}|${o.engine}|${o.region}`
    const ps = promptScope.get(scopeKey) ?? { o, day, responses: 0, entityMentions: 0, entityMentionsSq: 0, entityObservations: 0 }
    ps.responses++
    ps.entityMentions += entities
    ps.entityMentionsSq += entities * entities
    if (entities > 0) ps.entityObservations++
    promptScope.set(scopeKey, ps)
    for (const m of a.mentions) {
      const entityId = m.competitorId ?? 0
      const key = `${o.brandId}|${entityId}|${promptKey}`
      const e = promptEntity.get(key) ??
        { o, day, entityId, engines: 0, mentions: 0, coMentions: 0, rankSum: 0, withBrand: 0, positive: 0, neutral: 0, negative: 0 }
      e.engines |= engineBit(o.engine)
      e.mentions++
      e.coMentions += entities
      e.rankSum += m.rank
      if (a.brandMentioned) e.withBrand++
      e[m.label]++
      promptEntity.set(key, e)
      const skey = `${scopeKey}|${entityId}`
      const se = promptEntityScope.get(skey) ?? { o, day, entityId, mentions: 0, coMentions: 0, rankSum: 0, positive: 0, neutral: 0, negative: 0 }
      se.mentions++
      se.coMentions += entities
      se.rankSum += m.rank
      se[m.label]++
      promptEntityScope.set(skey, se)
    }
    const seen = new Set<string>()
    const competitors = a.mentions.filter((m) => m.competitorId !== null).map((m) => m.competitorId!)
    for (const c of a.citations) {
      const first = !seen.has(c.domain)
      seen.add(c.domain)
      const key = `${o.brandId}|${day}|${o.region}|${c.domain}`
      const d = domain.get(key) ?? { o, day, domain: c.domain, bucket: c.bucket, citations: 0, competitorObs: 0, brandObs: 0 }
      d.citations++
      if (first && a.mentionedCompetitors > 0) d.competitorObs++
      if (first && a.brandMentioned) d.brandObs++
      domain.set(key, d)
      for (const entityId of competitors) {
        const ekey = `${o.brandId}|${entityId}|${day}|${o.region}|${c.domain}`
        const e = domainEntity.get(ekey) ?? { o, day, entityId, domain: c.domain, bucket: c.bucket, citations: 0, observations: 0 }
        e.citations++
        if (first) e.observations++
        domainEntity.set(ekey, e)
      }
      if (!first) continue
      const pkey = `${o.brandId}|${day}|${o.promptId}|${o.region}|${c.domain}`
      const pd = promptDomain.get(pkey) ?? { o, day, domain: c.domain, bucket: c.bucket, competitorObs: 0, brandObs: 0 }
      if (a.mentionedCompetitors > 0) pd.competitorObs++
      if (a.brandMentioned) pd.brandObs++
      promptDomain.set(pkey, pd)
      for (const entityId of competitors) {
        const ekey = `${pkey}|${entityId}`
        const e = promptDomainEntity.get(ekey) ?? { o, day, entityId, domain: c.domain, observations: 0 }
        e.observations++
        promptDomainEntity.set(ekey, e)
      }
    }
  }
  const sorted = <A>(map: Map<string, A>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v)
  return {
    prompt: sorted(prompt),
    promptEntity: sorted(promptEntity),
    domain: sorted(domain),
    domainEntity: sorted(domainEntity),
    promptDomain: sorted(promptDomain),
    promptDomainEntity: sorted(promptDomainEntity),
    promptScope: sorted(promptScope),
    promptEntityScope: sorted(promptEntityScope)
  }
}

export const ObservationsRepoLive = Layer.effect(
  ObservationsRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertObservations = (rows: ReadonlyArray<StoredObservation>) =>
      sql`
        insert into observations (account_id, brand_id, prompt_id, engine, region, language, observed_at, day, origin, response,
                                  brand_mentioned, brand_rank, brand_cited, mentioned_competitors, citation_count,
                                  input_tokens, output_tokens, cost_usd)
        select * from unnest(${rows.map((r) => r.accountId)}::bigint[], ${rows.map((r) => r.brandId)}::int[],
                             ${rows.map((r) => r.promptId)}::uuid[], ${rows.map((r) => r.engine)}::text[],
                             ${rows.map((r) => r.region)}::text[], ${rows.map((r) => r.language)}::text[],
                             ${rows.map((r) => r.observedAt.toISOString())}::timestamptz[],
                             ${rows.map((r) => isoDay(r.observedAt))}::date[], ${rows.map((r) => r.origin)}::text[],
                             ${rows.map((r) => r.response)}::text[], ${rows.map((r) => r.analysis.brandMentioned)}::bool[],
                             ${rows.map((r) => r.analysis.brandRank)}::int[], ${rows.map((r) => r.analysis.brandCited)}::bool[],
                             ${rows.map((r) => r.analysis.mentionedCompetitors)}::int[],
                             ${rows.map((r) => r.analysis.citations.length)}::int[],
                             ${rows.map((r) => r.usage?.inputTokens ?? null)}::int[], ${rows.map((r) => r.usage?.outputTokens ?? null)}::int[],
                             ${rows.map((r) => r.usage?.costUsd ?? null)}::float8[])
        on conflict on constraint observations_key do nothing
        returning id, prompt_id::text || '|' || engine || '|' || region || '|' || language || '|' ||
                  (extract(epoch from observed_at) * 1000)::bigint::text as key`.pipe(decodeRows(InsertedRow))

    const insertChildren = (stored: ReadonlyArray<readonly [number, StoredObservation]>) =>
      Effect.gen(function*() {
        const mentions = stored.flatMap(([id, o]) => o.analysis.mentions.map((m) => [id, o, m] as const))
        if (mentions.length > 0) {
          yield* sql`
            insert into mentions (observation_id, account_id, brand_id, competitor_id, entity, prompt_id, engine, region, language,
                                  observed_at, day, rank, sentiment, sentiment_label, snippet, cited_url, via_citation_only)
            select * from unnest(${mentions.map(([id]) => id)}::bigint[], ${mentions.map(([, o]) => o.accountId)}::bigint[],
                                 ${mentions.map(([, o]) => o.brandId)}::int[], ${mentions.map(([, , m]) => m.competitorId)}::int[],
                                 ${mentions.map(([, , m]) => m.entity)}::text[], ${mentions.map(([, o]) => o.promptId)}::uuid[],
                                 ${mentions.map(([, o]) => o.engine)}::text[], ${mentions.map(([, o]) => o.region)}::text[],
                                 ${mentions.map(([, o]) => o.language)}::text[],
                                 ${mentions.map(([, o]) => o.observedAt.toISOString())}::timestamptz[],
                                 ${mentions.map(([, o]) => isoDay(o.observedAt))}::date[], ${mentions.map(([, , m]) => m.rank)}::int[],
                                 ${mentions.map(([, , m]) => m.sentiment)}::float8[], ${mentions.map(([, , m]) => m.label)}::text[],
                                 ${mentions.map(([, , m]) => m.snippet)}::text[], ${mentions.map(([, , m]) => m.citedUrl)}::text[],
                                 ${mentions.map(([, , m]) => m.viaCitationOnly)}::bool[])`
        }
        const citations = stored.flatMap(([id, o]) => o.analysis.citations.map((c) => [id, o, c] as const))
        if (citations.length > 0) {
          yield* sql`
            insert into citations (observation_id, position, account_id, brand_id, engine, region, day, url, domain, bucket)
            select * from unnest(${citations.map(([id]) => id)}::bigint[], ${citations.map(([, , c]) => c.position)}::int[],
                                 ${citations.map(([, o]) => o.accountId)}::bigint[], ${citations.map(([, o]) => o.brandId)}::int[],
                                 ${citations.map(([, o]) => o.engine)}::text[], ${citations.map(([, o]) => o.region)}::text[],
                                 ${citations.map(([, o]) => isoDay(o.observedAt))}::date[], ${citations.map(([, , c]) => c.url)}::text[],
                                 ${citations.map(([, , c]) => c.domain)}::text[], ${citations.map(([, , c]) => c.bucket)}::text[])`
        }
        const fanouts = stored.flatMap(([id, o]) => o.analysis.fanouts.map((f) => [id, o, f] as const))
        if (fanouts.length > 0) {
          const ids = yield* sql`
            insert into fanouts (observation_id, position, account_id, brand_id, prompt_id, engine, day, sub_question)
            select * from unnest(${fanouts.map(([id]) => id)}::bigint[], ${fanouts.map(([, , f]) => f.position)}::int[],
                                 ${fanouts.map(([, o]) => o.accountId)}::bigint[], ${fanouts.map(([, o]) => o.brandId)}::int[],
                                 ${fanouts.map(([, o]) => o.promptId)}::uuid[], ${fanouts.map(([, o]) => o.engine)}::text[],
                                 ${fanouts.map(([, o]) => isoDay(o.observedAt))}::date[],
                                 ${fanouts.map(([, , f]) => f.subQuestion)}::text[])
            returning id, observation_id as "observationId", position`.pipe(decodeRows(FanoutRow))
          const fanoutId = new Map(ids.map((row) => [`${row.observationId}|${row.position}`, row.id]))
          const cited: Array<readonly [number, StoredObservation, AnalysedCitation]> = []
          for (const [id, o, f] of fanouts) {
            if (f.citations.length === 0) continue
            const stored = fanoutId.get(`${id}|${f.position}`)
            if (stored === undefined) return yield* Effect.dieMessage(`fan-out ${id}|${f.position} was not stored`)
            for (const c of f.citations) cited.push([stored, o, c])
          }
          if (cited.length > 0) {
            yield* sql`
              insert into fanout_citations (fanout_id, position, account_id, brand_id, day, url, domain, bucket)
              select * from unnest(${cited.map(([id]) => id)}::bigint[], ${cited.map(([, , c]) => c.position)}::int[],
                                   ${cited.map(([, o]) => o.accountId)}::bigint[], ${cited.map(([, o]) => o.brandId)}::int[],
                                   ${cited.map(([, o]) => isoDay(o.observedAt))}::date[], ${cited.map(([, , c]) => c.url)}::text[],
                                   ${cited.map(([, , c]) => c.domain)}::text[], ${cited.map(([, , c]) => c.bucket)}::text[])`
          }
        }
      })

    type Column<A> = readonly [name: string, type: string, value: (row: A) => string | number | null]

    /** The key columns a rollup row takes from its observation: account, brand and day, and the given ones. */
    const ofObservation = <A extends { readonly o: StoredObservation; readonly day: string }>(
      ...more: ReadonlyArray<"engine" | "region" | "language" | "prompt_id">
    ): Array<Column<A>> => [
      ["account_id", "bigint", (d) => d.o.accountId],
      ["brand_id", "int", (d) => d.o.brandId],
      ["day", "date", (d) => d.day],
      ...more.map((name): Column<A> =>
        name === "prompt_id" ? [name, "uuid", (d) => d.o.promptId] : [name, "text", (d) => d.o[name]]
      )
    ]

    /**
     * Adds rows to a daily rollup in one statement, the columns as unnest arrays: a row whose key is already there
     * sums the `sum` columns into it, ors the `or` bit sets and keeps its `kept` columns.
     */
    const addToRollup = <A>(
      rows: ReadonlyArray<A>,
      table: string,
      columns: {
        readonly key: ReadonlyArray<Column<A>>
        readonly kept?: ReadonlyArray<Column<A>>
        readonly or?: ReadonlyArray<Column<A>>
        readonly sum: ReadonlyArray<Column<A>>
      }
    ) => {
      if (rows.length === 0) return Effect.void
      const or = columns.or ?? []
      const all = [...columns.key, ...(columns.kept ?? []), ...or, ...columns.sum]
      const set = [
        ...or.map(([c]) => `${c} = ${table}.${c} | excluded.${c}`),
        ...columns.sum.map(([c]) => `${c} = ${table}.${c} + excluded.${c}`)
      ]
      return sql`
        insert into ${sql.literal(table)} (${sql.literal(all.map(([name]) => name).join(", "))})
        select * from unnest(${sql.csv(all.map(([, type, value]) => sql`${rows.map(value)}::${sql.literal(type)}[]`))})
        on conflict (${sql.literal(columns.key.map(([name]) => name).join(", "))}) do update set ${sql.literal(set.join(", "))}`.pipe(
          Effect.asVoid
        )
    }

    const addRollups = (rows: ReadonlyArray<StoredObservation>) =>
      Effect.gen(function*() {
        const { daily, domains, entity } = rollups(rows)
        yield* addToRollup(daily, "observation_daily", {
          key: ofObservation("engine", "region", "language"),
          sum: [
            ["responses", "int", (d) => d.responses],
            ["entity_mentions", "int", (d) => d.entityMentions],
            ["entity_mentions_sq", "int", (d) => d.entityMentionsSq],
            ["entity_observations", "int", (d) => d.entityObservations],
            ["brand_mentions", "int", (d) => d.mentions],
            ["brand_cited", "int", (d) => d.cited],
            ["citations", "int", (d) => d.citations]
          ]
        })
        yield* addToRollup(entity, "mention_daily", {
          key: [...ofObservation("engine", "region", "language"), ["entity_id", "int", (d) => d.entityId]],
          sum: [
            ["mentions", "int", (d) => d.mentions],
            ["co_mentions", "int", (d) => d.coMentions],
            ["rank_sum", "int", (d) => d.rankSum],
            ["top1", "int", (d) => d.top1],
            ["top3", "int", (d) => d.top3],
            ["sentiment_sum", "float8", (d) => d.sentimentSum],
            ["positive", "int", (d) => d.positive],
            ["neutral", "int", (d) => d.neutral],
            ["negative", "int", (d) => d.negative]
          ]
        })
        yield* addToRollup(domains, "citation_daily", {
          key: [...ofObservation("engine", "region", "language"), ["domain", "text", (d) => d.domain]],
          kept: [["bucket", "text", (d) => d.bucket]],
          sum: [["citations", "int", (d) => d.citations]]
        })
        yield* addReadRollups(rows)
      })

    /** The rollups of migrations/0004 and 0025. */
    const addReadRollups = (rows: ReadonlyArray<StoredObservation>) =>
      Effect.gen(function*() {
        const { domain, domainEntity, prompt, promptDomain, promptDomainEntity, promptEntity, promptEntityScope, promptScope } = readRollups(rows)
        yield* addToRollup(prompt, "prompt_daily", {
          key: ofObservation("prompt_id"),
          sum: [
            ["responses", "int", (d) => d.responses],
            ["entity_mentions", "int", (d) => d.entityMentions],
            ["entity_mentions_sq", "int", (d) => d.entityMentionsSq],
            ["entity_observations", "int", (d) => d.entityObservations]
          ]
        })
        yield* addToRollup(promptEntity, "prompt_entity_daily", {
          key: [...ofObservation("prompt_id"), ["entity_id", "int", (d) => d.entityId]],
          or: [["engines", "int", (d) => d.engines]],
          sum: [
            ["co_mentions", "int", (d) => d.coMentions],
            ["mentions", "int", (d) => d.mentions],
            ["rank_sum", "int", (d) => d.rankSum],
            ["with_brand", "int", (d) => d.withBrand],
            ["positive", "int", (d) => d.positive],
            ["neutral", "int", (d) => d.neutral],
            ["negative", "int", (d) => d.negative]
          ]
        })
        yield* addToRollup(domain, "domain_daily", {
          key: [...ofObservation("region"), ["domain", "text", (d) => d.domain]],
          kept: [["bucket", "text", (d) => d.bucket]],
          sum: [
            ["citations", "int", (d) => d.citations],
            ["competitor_observations", "int", (d) => d.competitorObs],
            ["brand_observations", "int", (d) => d.brandObs]
          ]
        })
        yield* addToRollup(domainEntity, "domain_entity_daily", {
          key: [...ofObservation("region"), ["entity_id", "int", (d) => d.entityId], ["domain", "text", (d) => d.domain]],
          kept: [["bucket", "text", (d) => d.bucket]],
          sum: [
            ["citations", "int", (d) => d.citations],
            ["observations", "int", (d) => d.observations]
          ]
        })
        yield* addToRollup(promptDomain, "prompt_domain_daily", {
          key: [...ofObservation("prompt_id", "region"), ["domain", "text", (d) => d.domain]],
          kept: [["bucket", "text", (d) => d.bucket]],
          sum: [
            ["competitor_observations", "int", (d) => d.competitorObs],
            ["brand_observations", "int", (d) => d.brandObs]
          ]
        })
        yield* addToRollup(promptDomainEntity, "prompt_domain_entity_daily", {
          key: [...ofObservation("prompt_id", "region"), ["domain", "text", (d) => d.domain], ["entity_id", "int", (d) => d.entityId]],
          sum: [["observations", "int", (d) => d.observations]]
        })
        yield* addToRollup(promptScope, "prompt_scope_daily", {
          key: ofObservation("prompt_id", "engine", "region"),
          sum: [
            ["responses", "int", (d) => d.responses],
            ["entity_mentions", "int", (d) => d.entityMentions],
            ["entity_mentions_sq", "int", (d) => d.entityMentionsSq],
            ["entity_observations", "int", (d) => d.entityObservations]
          ]
        })
        yield* addToRollup(promptEntityScope, "prompt_entity_scope_daily", {
          key: [...ofObservation("prompt_id", "engine", "region"), ["entity_id", "int", (d) => d.entityId]],
          sum: [
            ["mentions", "int", (d) => d.mentions],
            ["co_mentions", "int", (d) => d.coMentions],
            ["rank_sum", "int", (d) => d.rankSum],
            ["positive", "int", (d) => d.positive],
            ["neutral", "int", (d) => d.neutral],
            ["negative", "int", (d) => d.negative]
          ]
        })
      })

    /** Tokens of newly stored scanned answers, per account and UTC month (the monthly budget). */
    const addTokenUsage = (rows: ReadonlyArray<StoredObservation>) => {
      const byMonth = new Map<string, { accountId: number; month: string; tokens: number }>()
      for (const o of rows) {
        if (o.usage === undefined) continue
        const month = monthStart(o.observedAt)
        const key = `${o.accountId}|${month}`
        const entry = byMonth.get(key) ?? { accountId: o.accountId, month, tokens: 0 }
        entry.tokens += o.usage.inputTokens + o.usage.outputTokens
        byMonth.set(key, entry)
      }
      const entries = [...byMonth.values()].filter((e) => e.tokens > 0)
      return entries.length === 0 ? Effect.void : sql`
        insert into scan_token_usage (account_id, month, tokens)
        select * from unnest(${entries.map((e) => e.accountId)}::bigint[], ${entries.map((e) => e.month)}::date[],
                             ${entries.map((e) => e.tokens)}::bigint[])
        on conflict (account_id, month) do update set tokens = scan_token_usage.tokens + excluded.tokens`.pipe(Effect.asVoid)
    }

    const insert: ObservationsRepoShape["insert"] = (rows) =>
      rows.length === 0
        ? Effect.succeed({ inserted: 0 })
        : Effect.gen(function*() {
          const returned = yield* insertObservations(rows)
          if (returned.length === 0) return { inserted: 0 }
          const byKey = new Map(rows.map((row) => [observationKey(row), row]))
          const stored: Array<readonly [number, StoredObservation]> = []
          for (const r of returned) {
            const row = byKey.get(r.key)
            // The key is computed by the statement from the columns it was given: a miss is a broken contract.
            if (row === undefined) return yield* Effect.dieMessage(`inserted observation ${r.key} was not offered`)
            stored.push([r.id, row])
          }
          yield* insertChildren(stored)
          yield* addRollups(stored.map(([, o]) => o))
          yield* addTokenUsage(stored.map(([, o]) => o))
          return { inserted: stored.length }
        }).pipe(sql.withTransaction, Effect.orDie)

    return {
      competitors: (accountId, brandId) =>
        sql`
          select id::int as id, name, domain, aliases, pinned from competitors
          where account_id = ${accountId} and brand_id = ${brandId} order by created_at, id`.pipe(decodeRows(EntityRow), Effect.orDie),
      prompts: (accountId, brandId) =>
        sql`
          select id::text as id, num, prompt from prompts
          where account_id = ${accountId} and brand_id = ${brandId} order by created_at, num`.pipe(decodeRows(PromptRef), Effect.orDie),
      insert,
      deleteForBrand: (accountId, brandId) =>
        Effect.gen(function*() {
          yield* sql`delete from observation_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from mention_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from citation_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from prompt_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from prompt_entity_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from domain_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from domain_entity_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from prompt_domain_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from prompt_domain_entity_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from prompt_scope_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from prompt_entity_scope_daily where account_id = ${accountId} and brand_id = ${brandId}`
          yield* sql`delete from observations where account_id = ${accountId} and brand_id = ${brandId}`
        }).pipe(sql.withTransaction, Effect.orDie),
      count: (accountId, brandId) =>
        sql`select count(*)::int as n from observations where account_id = ${accountId} and brand_id = ${brandId}`.pipe(countOf, Effect.orDie),
      accountsWithSlug: (slug) =>
        sql`
          select b.account_id::int as "accountId",
                 (select u.email from users u where u.account_id = b.account_id order by u.id limit 1) as email
          from brands b where b.slug = ${slug} order by b.account_id`.pipe(decodeRows(SlugAccount), Effect.orDie),
      requestScan: (accountId, brandId, at) =>
        sql`
          update brands set next_scan_at = least(next_scan_at, ${at}::timestamptz)
          where account_id = ${accountId} and id = ${brandId}
          returning next_scan_at as "nextScanAt"`.pipe(
          decodeRows(Schema.Struct({ nextScanAt: Schema.DateFromSelf })),
          Effect.map((rows) => rows[0]?.nextScanAt ?? at),
          Effect.orDie
        ),
      claimDue: (now, limit) =>
        sql`
          with due as (
            -- Brands beyond the plan's brand cap (after a downgrade) are not scanned: the account's oldest
            -- brands (added_at, id) up to the cap are; the others stay due and are scanned once they fit.
            select b.id from brands b
            join accounts a on a.id = b.account_id
            join plans p on p.id = a.plan_id
            where b.next_scan_at <= ${now}
              and (select count(*) from brands o
                   where o.account_id = b.account_id and (o.added_at, o.id) < (b.added_at, b.id)) < p.max_brands
            order by b.next_scan_at, b.id limit ${limit}
            for update of b skip locked
          )
          update brands b set next_scan_at = ${now}::timestamptz + make_interval(hours => p.scan_hours)
          from due, accounts a, plans p
          where b.id = due.id and a.id = b.account_id and p.id = a.plan_id
          returning b.id::int as id, b.account_id::int as "accountId", b.slug`.pipe(decodeRows(DueBrand), Effect.orDie),
      recordFailures: (failures) =>
        failures.length === 0 ? Effect.void : sql`
          insert into scan_failures (account_id, brand_id, prompt_id, engine, attempts, error, failed_at, reason)
          select * from unnest(${failures.map((f) => f.accountId)}::bigint[], ${failures.map((f) => f.brandId)}::int[],
                               ${failures.map((f) => f.promptId)}::uuid[], ${failures.map((f) => f.engine)}::text[],
                               ${failures.map((f) => f.attempts)}::int[], ${failures.map((f) => f.error)}::text[],
                               ${failures.map((f) => f.failedAt.toISOString())}::timestamptz[], ${failures.map((f) => f.reason)}::text[])`.pipe(Effect.asVoid, Effect.orDie),
      failures: (accountId, brandId) =>
        sql`
          select account_id::int as "accountId", brand_id::int as "brandId", prompt_id::text as "promptId", engine, attempts, error,
                 reason, failed_at as "failedAt"
          from scan_failures where account_id = ${accountId} and brand_id = ${brandId} order by id`.pipe(decodeRows(ScanFailure), Effect.orDie),
      scanTargets: (slug) =>
        sql`
          select id::int as id, account_id::int as "accountId", slug from brands
          ${slug === null ? sql`` : sql`where slug = ${slug}`}
          order by added_at, id`.pipe(decodeRows(DueBrand), Effect.orDie),
      tokensInMonth: (accountId, month) =>
        sql`
          select coalesce(sum(tokens), 0)::float8 as tokens from scan_token_usage where account_id = ${accountId} and month = ${month}::date`.pipe(
          singleRow(TokensRow),
          Effect.map((row) => row.tokens),
          Effect.orDie
        ),
      recordEngineStatus: (accountId, brandId, statuses) =>
        statuses.length === 0 ? Effect.void : sql`
          insert into scan_engine_status (account_id, brand_id, engine, scanned_at, observations, failures, last_error, tokens, failures_by_reason)
          select ${accountId}, ${brandId}, s.engine, s.scanned_at, s.observations, s.failures, s.last_error, s.tokens, s.by_reason::jsonb
          from unnest(${statuses.map((s) => s.engine)}::text[],
                 ${statuses.map((s) => s.scannedAt.toISOString())}::timestamptz[], ${statuses.map((s) => s.observations)}::int[],
                 ${statuses.map((s) => s.failures)}::int[], ${statuses.map((s) => s.lastError)}::text[], ${statuses.map((s) => s.tokens)}::bigint[],
                 ${statuses.map((s) => JSON.stringify(s.failuresByReason))}::text[])
            as s (engine, scanned_at, observations, failures, last_error, tokens, by_reason)
          on conflict (account_id, brand_id, engine) do update set scanned_at = excluded.scanned_at, observations = excluded.observations,
            failures = excluded.failures, last_error = excluded.last_error, tokens = excluded.tokens,
            failures_by_reason = excluded.failures_by_reason`.pipe(Effect.asVoid, Effect.orDie),
      engineStatus: (accountId, brandId) =>
        sql`
          select engine, scanned_at as "scannedAt", observations, failures, last_error as "lastError", tokens::float8 as tokens,
                 failures_by_reason::text as "failuresByReason"
          from scan_engine_status where account_id = ${accountId} and brand_id = ${brandId} order by engine`.pipe(
          decodeRows(EngineScanStatusRow),
          Effect.orDie
        )
    }
  })
)
