import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Deferred, Effect, Exit, Layer, Option, Schema } from "effect"
import type { BrandKey } from "../brands/Brands.js"
import { isRecord } from "../platform/Guards.js"
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
 * Crawler hits (and their rows of the aggregator's queue), AI referrals and the monthly usage,
 * written by one statement.
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
  const cause = error.cause
  if (!isRecord(cause)) return false
  return cause.code === "23514" && (cause.constraint === undefined || cause.constraint === "monthly_usage_within_cap")
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
const StoredRows = Schema.Struct({
  stored: Schema.Number,
  /** The keys stored, "key|µs since the epoch", when the statement served several stores. */
  keys: Schema.NullOr(Schema.Array(Schema.String)),
  used: Schema.NullOr(Schema.Number)
})

/** Stores that may share one statement: the same account, brand, channel, month, cap and flags. */
const storeKey = (input: StoreInput) =>
  `${input.accountId}|${input.brandId}|${input.channel}|${input.month}|${input.cap}|${input.unauthenticated === true}|${input.countUsage !== false}`

/**
 * Statements of one key in flight at once (from this process). Two: deliveries whose rows differ
 * (new pages) still use two backends (bench/ingest.ts halved its rate at one); past two, they wait
 * and go together.
 */
const IN_FLIGHT = 2

/** A statement of several stores takes at most this many hits (more wait for the next one). */
const GROUP_MAX_HITS = 20_000

interface Waiting {
  readonly input: StoreInput
  readonly done: Deferred.Deferred<Stored, UsageOverCap>
}

export const HitsRepoLive = Layer.effect(
  HitsRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * One statement for the stores of `inputs`, which share their account, brand, channel, month,
     * cap and flags (storeKey): store d's hits are its first limit[d], a key offered by two of
     * them is stored for the first (what storing them one after the other would do), and each
     * gets back what it stored.
     */
    const storeMany = (inputs: ReadonlyArray<StoreInput>) => {
      const input = inputs[0]!
      const h: Array<HitRow> = []
      const hd: Array<number> = []
      const hi: Array<number> = []
      const r: Array<ReferralRow> = []
      const rd: Array<number> = []
      for (let d = 0; d < inputs.length; d++) {
        const { hits, referrals } = inputs[d]!
        for (let i = 0; i < hits.length; i++) (h.push(hits[i]!), hd.push(d), hi.push(i))
        for (let i = 0; i < referrals.length; i++) (r.push(referrals[i]!), rd.push(d))
      }
      const limits = inputs.map((x) => x.limit)
      const received = inputs.map((x) => x.receivedAt ?? null)
      const col = <A>(rows: ReadonlyArray<A>, f: (row: A) => unknown) => {
        const out = new Array(rows.length)
        for (let i = 0; i < rows.length; i++) out[i] = f(rows[i]!)
        return out
      }
      // One store: everything the statement stored is its own. Several: the keys stored (with their
      // time) come back, and each is the first store's that offered it (matched here: a join in the
      // statement would run as a nested loop in its generic plan, as the span upkeep's did:
      // src/agents/Repo.ts, fold).
      const stored = inputs.length === 1
        ? sql`(select count(*) from ins)::int as stored, null::text[] as keys`
        : sql`(select count(*) from ins)::int as stored,
              (select array_agg(record_key || '|' || (extract(epoch from ts) * 1000000)::bigint::text) from ins) as keys`
      return sql`
        with brand as (
          -- The brand row's key-share lock, once per statement (what a foreign key's check per row took:
          -- migration 0031): a brand deleted meanwhile waits for this commit and takes these rows with
          -- it, or is gone already and nothing is stored.
          select 1 from brands where account_id = ${input.accountId} and id = ${input.brandId} for key share
        ), hit_rows as (
          select * from unnest(
            ${col(h, (x) => x.key)}::text[], ${col(h, (x) => x.ts)}::float8[], ${col(h, (x) => x.bot)}::text[],
            ${col(h, (x) => x.vendor)}::text[], ${col(h, (x) => x.kind)}::text[], ${col(h, (x) => x.host)}::text[],
            ${col(h, (x) => x.path)}::text[], ${col(h, (x) => x.query)}::text[], ${col(h, (x) => x.method)}::text[],
            ${col(h, (x) => x.status)}::int2[], ${col(h, (x) => x.clientIp)}::text[], ${col(h, (x) => x.country)}::text[],
            ${col(h, (x) => x.referrer)}::text[],
            ${col(h, (x) => x.verification ?? "unverified")}::text[], ${col(h, (x) => x.verifyPending ?? false)}::bool[],
            ${hd}::int4[], ${hi}::int4[]
          ) as u(record_key, ms, bot, vendor, kind, host, path, query, method, status, client_ip, country, referrer,
                 verification, verify_pending, d, i)
          -- Each store's first limit[d] hits (the room it was given under the cap).
          where u.i < (${limits}::int4[])[u.d + 1] and exists (select 1 from brand)
        ), ins as (
          insert into crawler_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, host, path, query, method,
                                    status, client_ip, country, referrer, channel, verification, verify_pending, unauthenticated)
          select ${input.brandId}, record_key, ${input.accountId}, to_timestamp(ms / 1000.0), bot, vendor, kind, host, path,
                 query, method, status, client_ip, country, referrer, ${input.channel}, verification, verify_pending,
                 ${input.unauthenticated === true}
          from hit_rows
          where (ms <> (${received}::float8[])[d + 1]) is true
             -- A scalar subquery probes the key once per row; a NOT EXISTS here could be planned as a hash
             -- of all the brand's hits whenever the statistics say the table is small (a new account).
             or (select 1 from crawler_hits o where o.account_id = ${input.accountId} and o.brand_id = ${input.brandId} and o.record_key = hit_rows.record_key limit 1) is null
          on conflict (account_id, brand_id, record_key, ts) do nothing
          returning record_key, ts, path, bot, vendor, kind, status, verification
        ), queued as (
          -- The rollups are the aggregator's (src/agents/Aggregator.ts): the new hits wait for it in the
          -- queue, which every read adds to the rollups (docs/performance.md).
          insert into crawler_fold_queue (account_id, brand_id, record_key, ts, path, bot, vendor, kind, status, verification)
          select ${input.accountId}, ${input.brandId}, record_key, ts, path, bot, vendor, kind, status, verification from ins
        ), refs as (
          insert into ai_referrals (brand_id, record_key, account_id, ts, engine, referrer, host, path, query, method, status,
                                    client_ip, country, channel)
          select ${input.brandId}, record_key, ${input.accountId}, to_timestamp(ms / 1000.0), engine, referrer, host, path,
                 query, method, status, client_ip, country, ${input.channel}
          from unnest(
            ${col(r, (x) => x.key)}::text[], ${col(r, (x) => x.ts)}::float8[], ${col(r, (x) => x.engine)}::text[],
            ${col(r, (x) => x.referrer)}::text[], ${col(r, (x) => x.host)}::text[], ${col(r, (x) => x.path)}::text[],
            ${col(r, (x) => x.query)}::text[], ${col(r, (x) => x.method)}::text[], ${col(r, (x) => x.status)}::int2[],
            ${col(r, (x) => x.clientIp)}::text[], ${col(r, (x) => x.country)}::text[], ${rd}::int4[]
          ) as u(record_key, ms, engine, referrer, host, path, query, method, status, client_ip, country, d)
          where exists (select 1 from brand) and ((ms <> (${received}::float8[])[d + 1]) is true
             or (select 1 from ai_referrals o where o.account_id = ${input.accountId} and o.brand_id = ${input.brandId} and o.record_key = u.record_key limit 1) is null)
          on conflict (account_id, brand_id, record_key, ts) do nothing
        ), counted as (
          -- Last, so the usage row is locked only from here to the commit (QuotaRepo.withinCap).
          insert into monthly_usage (account_id, month, events, cap)
          select ${input.accountId}, ${input.month}::date, count(*), ${input.cap}::bigint from ins
          having count(*) > 0 and ${input.countUsage !== false}
          on conflict (account_id, month) do update set events = monthly_usage.events + excluded.events, cap = excluded.cap
          returning events
        )
        select ${stored}, (select events from counted)::int as used`.pipe(
        // One row per statement: decoding it costs nothing next to the statement.
        singleRow(StoredRows),
        Effect.map(({ keys, stored, used }): ReadonlyArray<Stored> => {
          // No key back: one store (its count is the statement's), or several that stored nothing new.
          if (keys === null) return inputs.length === 1 ? [{ stored, used }] : inputs.map(() => ({ stored: 0, used }))
          const counts = new Array<number>(inputs.length).fill(0)
          // By key and time in microseconds (as stored); by key alone should a rounding differ.
          const owner = new Map<string, number>()
          const ownerOfKey = new Map<string, number>()
          for (let i = 0; i < h.length; i++) {
            if (hi[i]! >= limits[hd[i]!]!) continue // past its store's limit: not offered
            const k = `${h[i]!.key}|${Math.round(h[i]!.ts * 1000)}`
            if (!owner.has(k)) owner.set(k, hd[i]!)
            if (!ownerOfKey.has(h[i]!.key)) ownerOfKey.set(h[i]!.key, hd[i]!)
          }
          for (const k of keys) {
            const d = owner.get(k) ?? ownerOfKey.get(k.slice(0, k.lastIndexOf("|")))
            if (d !== undefined) counts[d]!++
          }
          return counts.map((n) => ({ stored: n, used }))
        }),
        Effect.catchAll((error): Effect.Effect<never, UsageOverCap | SqlError> =>
          isCapViolation(error) ? Effect.fail(new UsageOverCap()) : Effect.fail(error))
      )
    }

    /**
     * Stores of one account wait on each other in PostgreSQL anyway: each updates the month's usage
     * row, whose lock it holds until its commit (the rollups are the aggregator's: docs/performance.md).
     * So while IN_FLIGHT stores of a key (storeKey) run, the stores of that key that come meanwhile
     * wait here, then go as one statement: one statement's fixed cost and one usage update for all of
     * them (bench/hot-account.ts). A store inside a transaction (the locked path near the cap) runs
     * alone, in it.
     */
    const queues = new Map<string, { running: number; readonly waiting: Array<Waiting> }>()

    /** A store run by itself (alone, or again after the statement it shared failed). */
    const alone = (input: StoreInput): Effect.Effect<Stored, UsageOverCap> =>
      storeMany([input]).pipe(
        Effect.map((stored) => stored[0]!),
        Effect.catchIf((error): error is SqlError => !(error instanceof UsageOverCap), Effect.die)
      )

    const runGroup = (group: ReadonlyArray<Waiting>): Effect.Effect<void> =>
      Effect.flatMap(Effect.exit(storeMany(group.map((w) => w.input))), (exit) => {
        if (Exit.isSuccess(exit)) return Effect.forEach(group, (w, d) => Deferred.succeed(w.done, exit.value[d]!), { discard: true })
        const failure = Cause.failureOption(exit.cause)
        // Over the cap: each goes to the locked path, as it would have alone. Anything else (an outage,
        // data one of them made the database refuse, a defect): each is tried alone, for its own answer.
        if (Option.isSome(failure) && failure.value instanceof UsageOverCap) {
          const overCap = failure.value
          return Effect.forEach(group, (w) => Deferred.fail(w.done, overCap), { discard: true })
        }
        return Effect.forEach(group, (w) => Deferred.complete(w.done, alone(w.input)), { discard: true })
      })

    /** After a statement of `key`: the stores that waited meanwhile go next, in the background. */
    const next = (key: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const state = queues.get(key)
        if (state === undefined) return Effect.void
        state.running--
        const waiting = state.waiting
        if (waiting.length === 0) {
          if (state.running === 0) queues.delete(key)
          return Effect.void
        }
        state.running++
        let hits = 0
        let n = 0
        while (n < waiting.length && (n === 0 || hits + waiting[n]!.input.hits.length <= GROUP_MAX_HITS)) hits += waiting[n++]!.input.hits.length
        const group = waiting.splice(0, n)
        return Effect.asVoid(Effect.forkDaemon(Effect.ensuring(runGroup(group), next(key))))
      })

    const store: HitsRepoShape["store"] = (input) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) => {
        if (Option.isSome(transaction)) return alone(input)
        const key = storeKey(input)
        return Effect.suspend(() => {
          let state = queues.get(key)
          if (state === undefined) queues.set(key, state = { running: 0, waiting: [] })
          if (state.running >= IN_FLIGHT) {
            const waiting = state.waiting
            return Effect.flatMap(Deferred.make<Stored, UsageOverCap>(), (done) => {
              waiting.push({ input, done })
              return Deferred.await(done)
            })
          }
          state.running++
          return Effect.ensuring(alone(input), next(key))
        })
      })

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
