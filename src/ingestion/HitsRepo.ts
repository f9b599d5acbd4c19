import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Schema } from "effect"
import type { BrandKey } from "../brands/Brands.js"
import { rows, singleRow } from "../platform/Rows.js"
import type { LogRequest } from "./Records.js"

/** A recognised crawler request, ready to store (docs/agents.md). */
export interface HitRow extends LogRequest {
  readonly key: string
  readonly bot: string
  readonly vendor: string
  readonly kind: string
  /** docs/verification.md: the verdict (default unverified) and whether a reverse-DNS answer is awaited. */
  readonly verification?: "verified" | "spoofed" | "unverified"
  readonly verifyPending?: boolean
}

/** A person's request referred by an answer engine. */
export interface ReferralRow extends LogRequest {
  readonly key: string
  readonly engine: string
}

export interface StoreInput {
  readonly accountId: number
  readonly brandId: number
  readonly channel: string
  /** First day of the month (UTC) the hits count in, "YYYY-MM-01". */
  readonly month: string
  readonly hits: ReadonlyArray<HitRow>
  /** At most this many hits are stored (the room left under the monthly cap); the rest are dropped. */
  readonly limit: number
  /**
   * The month's cap: rather than take the usage above it, the statement fails whole with
   * UsageOverCap (a concurrent delivery took the room). null: not capped (demo data).
   */
  readonly cap: number | null
  readonly referrals: ReadonlyArray<ReferralRow>
  /** Hits nobody authenticated (the JavaScript tag): stored marked so (default false). */
  readonly unauthenticated?: boolean
  /** Whether the stored hits count in the month's usage (default true; the tag's do not). */
  readonly countUsage?: boolean
  /**
   * The time given to records without one (ms). Only such a record can come again with another time:
   * its key is looked up in every partition; a record with its own time conflicts on the key (docs/scale.md).
   * Absent: every record is looked up.
   */
  readonly receivedAt?: number
}

/**
 * Crawler hits, their rollup rows, AI referrals and the monthly usage, written by one statement.
 * A hit or referral whose key is already stored (a replay, a platform redelivery) is not stored
 * again and not counted. The cap is the caller's business (QuotaRepo.withinCap): this adds what it stored.
 */
export interface HitsRepoShape {
  readonly store: (input: StoreInput) => Effect.Effect<Stored, UsageOverCap>
  /** Per brand of `brands` and bot: the hits judged spoofed since `since`, where there are at least `min`. */
  readonly spoofedCounts: (brands: ReadonlyArray<BrandKey>, since: Date, min: number) => Effect.Effect<ReadonlyArray<SpoofedCount>>
}

export const SpoofedCount = Schema.Struct({ accountId: Schema.Number, brandId: Schema.Number, bot: Schema.String, spoofed: Schema.Number })
export type SpoofedCount = typeof SpoofedCount.Type

/** The store would have taken the month's usage above its cap: nothing of it was stored. */
export class UsageOverCap extends Schema.TaggedError<UsageOverCap>()("UsageOverCap", {}) {}

/** PostgreSQL's check_violation on monthly_usage's guard (migrations/0007). */
const isCapViolation = (error: SqlError): boolean => {
  const cause = error.cause as { code?: unknown; constraint?: unknown } | undefined
  return cause?.code === "23514" && (cause.constraint === undefined || cause.constraint === "monthly_usage_within_cap")
}

export interface Stored {
  /** Hits newly stored: the month's usage grew by exactly this. */
  readonly stored: number
  /** The month's usage after this statement, when it stored any hit (its row is then locked until commit). */
  readonly used: number | null
}

export class HitsRepo extends Context.Tag("HitsRepo")<HitsRepo, HitsRepoShape>() {}

/**
 * unnest() of one array per column (measured: some 1.6x the rows/s of a
 * multi-row insert through sql.insert, with a third of the PostgreSQL CPU). One statement text
 * whatever the row count, so the server back end prepares it once per connection.
 */
/** What a delivery's statement stored, and the month's usage after it (null: nothing counted). */
const StoredRow = Schema.Struct({ stored: Schema.Number, used: Schema.NullOr(Schema.Number) })

export const HitsRepoLive = Layer.effect(
  HitsRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const store: HitsRepoShape["store"] = (input) => {
      const h = input.hits
      const r = input.referrals
      const col = <A>(rows: ReadonlyArray<A>, f: (row: A) => unknown) => {
        const out = new Array(rows.length)
        for (let i = 0; i < rows.length; i++) out[i] = f(rows[i]!)
        return out
      }
      return sql`
        with hit_rows as (
          select * from unnest(
            ${col(h, (x) => x.key)}::text[], ${col(h, (x) => x.ts)}::float8[], ${col(h, (x) => x.bot)}::text[],
            ${col(h, (x) => x.vendor)}::text[], ${col(h, (x) => x.kind)}::text[], ${col(h, (x) => x.host)}::text[],
            ${col(h, (x) => x.path)}::text[], ${col(h, (x) => x.query)}::text[], ${col(h, (x) => x.method)}::text[],
            ${col(h, (x) => x.status)}::int2[], ${col(h, (x) => x.clientIp)}::text[], ${col(h, (x) => x.country)}::text[],
            ${col(h, (x) => x.referrer)}::text[],
            ${col(h, (x) => x.verification ?? "unverified")}::text[], ${col(h, (x) => x.verifyPending ?? false)}::bool[]
          ) as u(record_key, ms, bot, vendor, kind, host, path, query, method, status, client_ip, country, referrer,
                 verification, verify_pending)
          limit ${input.limit}
        ), ins as (
          insert into crawler_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, host, path, query, method,
                                    status, client_ip, country, referrer, channel, verification, verify_pending, unauthenticated)
          select ${input.brandId}, record_key, ${input.accountId}, to_timestamp(ms / 1000.0), bot, vendor, kind, host, path,
                 query, method, status, client_ip, country, referrer, ${input.channel}, verification, verify_pending,
                 ${input.unauthenticated === true}
          from hit_rows
          where (ms <> ${input.receivedAt ?? null}::float8) is true
             or not exists (select 1 from crawler_hits o where o.account_id = ${input.accountId} and o.brand_id = ${input.brandId} and o.record_key = hit_rows.record_key)
          on conflict (account_id, brand_id, record_key, ts) do nothing
          returning ts, path, bot, vendor, kind, status, verification
        ), roll as (
          insert into crawler_rollup (brand_id, day, path, bot, status, verification, account_id, vendor, kind, hits, last_seen)
          select ${input.brandId}, (ts at time zone 'UTC')::date, path, bot, status, verification, ${input.accountId}, min(vendor),
                 min(kind), count(*)::int, max(ts)
          from ins
          group by 2, 3, 4, 5, 6
          on conflict on constraint crawler_rollup_verdict_key do update
            set hits = crawler_rollup.hits + excluded.hits, last_seen = greatest(crawler_rollup.last_seen, excluded.last_seen)
        ), daily as (
          -- The rollup without the path (KPIs, trend, breakdowns).
          insert into crawler_daily (brand_id, day, bot, status, verification, account_id, vendor, kind, hits)
          select ${input.brandId}, (ts at time zone 'UTC')::date, bot, status, verification, ${input.accountId}, min(vendor),
                 min(kind), count(*)::int
          from ins
          group by 2, 3, 4, 5
          on conflict on constraint crawler_daily_verdict_key do update set hits = crawler_daily.hits + excluded.hits
        ), span_state as (
          -- The agent reads: the 7/30/90-day per-(path, bot) totals, when the brand has them (a rebuild holds this row).
          select as_of from crawler_span_state where account_id = ${input.accountId} and brand_id = ${input.brandId} and as_of is not null for share
        ), span_delta as (
          -- The stored hits per (window, path, bot) for the windows containing their day.
          select w.span, i.path, i.bot, min(i.vendor) as vendor, min(i.kind) as kind, count(*)::int as h,
                 (count(*) filter (where i.status between 200 and 399))::int as o, (count(*) filter (where i.status >= 400))::int as e,
                 max(i.ts) as ls, max(i.ts) filter (where i.status between 200 and 399) as lo,
                 max(i.ts) filter (where i.status >= 400) as le
          from ins i cross join span_state s cross join (values (7), (30), (90)) as w(span)
          where (i.ts at time zone 'UTC')::date between s.as_of - (w.span - 1) and s.as_of
          group by w.span, i.path, i.bot
        ), spans as (
          insert into crawler_span (brand_id, span, path, bot, account_id, vendor, kind, hits, oks, errors, last_seen, last_ok,
                                    last_error)
          select ${input.brandId}, span, path, bot, ${input.accountId}, vendor, kind, h, o, e, ls, lo, le from span_delta
          on conflict (account_id, brand_id, span, path, bot) do update set
            hits = crawler_span.hits + excluded.hits, oks = crawler_span.oks + excluded.oks,
            errors = crawler_span.errors + excluded.errors, last_seen = greatest(crawler_span.last_seen, excluded.last_seen),
            last_ok = greatest(crawler_span.last_ok, excluded.last_ok),
            last_error = greatest(crawler_span.last_error, excluded.last_error)
          returning span, path, bot, hits, oks, errors
        ), page_spans as (
          -- The per-path totals (0006). A span row whose total after the upsert equals what this
          -- statement added was empty before: a new distinct bot of the path (of its oks, its errors).
          insert into crawler_page_span (brand_id, span, path, account_id, hits, oks, errors, uniques, ok_uniques, error_uniques,
                                         last_seen, last_ok, last_error)
          select ${input.brandId}, d.span, d.path, ${input.accountId}, sum(d.h)::int, sum(d.o)::int, sum(d.e)::int,
                 (count(*) filter (where s.hits = d.h))::int, (count(*) filter (where d.o > 0 and s.oks = d.o))::int,
                 (count(*) filter (where d.e > 0 and s.errors = d.e))::int, max(d.ls), max(d.lo), max(d.le)
          from span_delta d join spans s on s.span = d.span and s.path = d.path and s.bot = d.bot
          group by d.span, d.path
          on conflict (account_id, brand_id, span, path) do update set
            hits = crawler_page_span.hits + excluded.hits, oks = crawler_page_span.oks + excluded.oks,
            errors = crawler_page_span.errors + excluded.errors, uniques = crawler_page_span.uniques + excluded.uniques,
            ok_uniques = crawler_page_span.ok_uniques + excluded.ok_uniques,
            error_uniques = crawler_page_span.error_uniques + excluded.error_uniques,
            last_seen = greatest(crawler_page_span.last_seen, excluded.last_seen),
            last_ok = greatest(crawler_page_span.last_ok, excluded.last_ok),
            last_error = greatest(crawler_page_span.last_error, excluded.last_error)
        ), refs as (
          insert into ai_referrals (brand_id, record_key, account_id, ts, engine, referrer, host, path, query, method, status,
                                    client_ip, country, channel)
          select ${input.brandId}, record_key, ${input.accountId}, to_timestamp(ms / 1000.0), engine, referrer, host, path,
                 query, method, status, client_ip, country, ${input.channel}
          from unnest(
            ${col(r, (x) => x.key)}::text[], ${col(r, (x) => x.ts)}::float8[], ${col(r, (x) => x.engine)}::text[],
            ${col(r, (x) => x.referrer)}::text[], ${col(r, (x) => x.host)}::text[], ${col(r, (x) => x.path)}::text[],
            ${col(r, (x) => x.query)}::text[], ${col(r, (x) => x.method)}::text[], ${col(r, (x) => x.status)}::int2[],
            ${col(r, (x) => x.clientIp)}::text[], ${col(r, (x) => x.country)}::text[]
          ) as u(record_key, ms, engine, referrer, host, path, query, method, status, client_ip, country)
          where (ms <> ${input.receivedAt ?? null}::float8) is true
             or not exists (select 1 from ai_referrals o where o.account_id = ${input.accountId} and o.brand_id = ${input.brandId} and o.record_key = u.record_key)
          on conflict (account_id, brand_id, record_key, ts) do nothing
        ), counted as (
          -- Last, so the usage row is locked only from here to the commit (QuotaRepo.withinCap).
          insert into monthly_usage (account_id, month, events, cap)
          select ${input.accountId}, ${input.month}::date, count(*), ${input.cap}::bigint from ins
          having count(*) > 0 and ${input.countUsage !== false}
          on conflict (account_id, month) do update set events = monthly_usage.events + excluded.events, cap = excluded.cap
          returning events
        )
        select (select count(*) from ins)::int as stored, (select events from counted)::int as used`.pipe(
        // One row per delivery: decoding it costs nothing next to the statement.
        singleRow(StoredRow),
        Effect.catchAll((error) => isCapViolation(error) ? Effect.fail(new UsageOverCap()) : Effect.die(error))
      )
    }

    const spoofedCounts: HitsRepoShape["spoofedCounts"] = (brands, since, min) =>
      brands.length === 0 ? Effect.succeed([]) : sql`
        select k.account_id::int as "accountId", k.brand_id::int as "brandId", s.bot, s.spoofed
        from unnest(${brands.map((b) => b.accountId)}::bigint[], ${brands.map((b) => b.brandId)}::int[]) as k(account_id, brand_id)
        cross join lateral (
          select h.bot, count(*)::int as spoofed from crawler_hits h
          where h.account_id = k.account_id and h.brand_id = k.brand_id and h.ts >= ${since} and h.verification = 'spoofed'
          group by h.bot having count(*) >= ${min}
        ) s`.pipe(rows(SpoofedCount), Effect.orDie)

    return { store, spoofedCounts }
  })
)
