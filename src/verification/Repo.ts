import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { FOLD_LOCK } from "../platform/FoldLock.js"
import { BackgroundSql } from "../platform/Sql.js"
import { firstRow, rows, singleRow } from "../platform/Rows.js"

/**
 * Storage of verification (docs/verification.md): the range snapshots saved by `cli ranges update`
 * (the newest wins over the bundled copy), and the hits waiting for a reverse-DNS answer with the
 * upgrade of their verdict, rollups included.
 */

import type { Verdict } from "./Verdict.js"
export { isVerdict, type Verdict, VERDICTS } from "./Verdict.js"

/** A stored hit still waiting for its reverse-DNS check. */
export const PendingHit = Schema.Struct({
  accountId: Schema.Number,
  brandId: Schema.Number,
  key: Schema.String,
  bot: Schema.String,
  clientIp: Schema.String,
  ts: Schema.DateFromSelf
})
export type PendingHit = typeof PendingHit.Type

const SnapshotRow = Schema.Struct({ id: Schema.Number, json: Schema.String })
const IdRow = Schema.Struct({ id: Schema.Number })
const SettledRow = Schema.Struct({ changed: Schema.Number, brands: Schema.NullOr(Schema.Array(Schema.Number)) })

export interface VerdictUpdate {
  readonly accountId: number
  readonly brandId: number
  readonly key: string
  /** The final verdict; "unverified" closes the check without changing any figure. */
  readonly verdict: Verdict
}

export interface VerificationRepoShape {
  /** The newest saved snapshot (its JSON text) and when it was saved, or null. */
  readonly latestSnapshot: Effect.Effect<{ readonly id: number; readonly json: string } | null>
  readonly saveSnapshot: (json: string) => Effect.Effect<number>
  /** Up to `limit` hits waiting for a reverse-DNS answer, oldest first. */
  readonly pending: (limit: number) => Effect.Effect<ReadonlyArray<PendingHit>>
  /**
   * Sets the verdict of waiting hits and moves their counts from `unverified` to it in crawler_rollup
   * and crawler_daily (or, for a hit the aggregator has not folded yet, in its queue row), in one
   * transaction. A hit no longer waiting (another process took it) is left alone, so every hit moves
   * once. Returns the hits whose verdict changed.
   */
  readonly settle: (updates: ReadonlyArray<VerdictUpdate>) => Effect.Effect<number>
}

export class VerificationRepo extends Context.Tag("VerificationRepo")<VerificationRepo, VerificationRepoShape>() {}

export const VerificationRepoLive = Layer.effect(
  VerificationRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The verification pass's reads and verdicts: connections of their own, never queued behind requests.
    const background = yield* BackgroundSql
    return {
      latestSnapshot: sql`
        select id::int as id, snapshot as json from verification_snapshots order by id desc limit 1`.pipe(
        firstRow(SnapshotRow),
        Effect.map(Option.getOrNull),
        Effect.orDie
      ),
      saveSnapshot: (json) =>
        sql`insert into verification_snapshots (snapshot) values (${json}) returning id::int as id`.pipe(
          singleRow(IdRow),
          Effect.map((row) => row.id),
          Effect.orDie
        ),
      pending: (limit) =>
        background`
          select account_id::int as "accountId", brand_id::int as "brandId", record_key as key, bot, client_ip as "clientIp", ts
          from crawler_hits where verify_pending order by ts limit ${limit}`.pipe(rows(PendingHit), Effect.orDie),
      settle: (updates) =>
        updates.length === 0 ? Effect.succeed(0) : background.withTransaction(Effect.gen(function*() {
          // A hit still queued for the aggregator takes its verdict in the queue (the fold counts it under
          // it); a folded one moves its counts in the rollups. The aggregator's lock keeps a fold from
          // moving hits between the two meanwhile.
          yield* background`select pg_advisory_xact_lock(${FOLD_LOCK}::bigint)`
          const settled = yield* background`
            with v as (
              select * from unnest(${updates.map((u) => u.accountId)}::bigint[], ${updates.map((u) => u.brandId)}::int[],
                                   ${updates.map((u) => u.key)}::text[], ${updates.map((u) => u.verdict)}::text[])
                as v(account_id, brand_id, record_key, verdict)
            ), upd as (
              -- Every key below leads with the account (the hits' primary key, the rollups' unique keys).
              update crawler_hits h set verification = v.verdict, verify_pending = false
              from v
              where h.account_id = v.account_id and h.brand_id = v.brand_id and h.record_key = v.record_key and h.verify_pending
              returning h.brand_id, h.account_id, h.record_key, h.ts, h.path, h.bot, h.vendor, h.kind, h.status, h.verification
            ), queued as (
              update crawler_fold_queue f set verification = u.verification
              from upd u
              where f.account_id = u.account_id and f.brand_id = u.brand_id and f.record_key = u.record_key and f.ts = u.ts
              returning f.account_id, f.brand_id, f.record_key, f.ts
            ), moved as (
              select brand_id, account_id, (ts at time zone 'UTC')::date as day, path, bot,
                     min(vendor) as vendor, min(kind) as kind, status, verification, count(*)::int as n, max(ts) as ls
              from upd u
              where verification <> 'unverified'
                and not exists (select 1 from queued q where q.account_id = u.account_id and q.brand_id = u.brand_id
                                                        and q.record_key = u.record_key and q.ts = u.ts)
              group by account_id, brand_id, 3, path, bot, status, verification
            ), roll_out as (
              update crawler_rollup r set hits = r.hits - m.n
              from (select account_id, brand_id, day, path, bot, status, sum(n)::int as n from moved group by 1, 2, 3, 4, 5, 6) m
              where r.account_id = m.account_id and r.brand_id = m.brand_id and r.day = m.day and r.path = m.path and r.bot = m.bot
                and r.status is not distinct from m.status and r.verification = 'unverified'
            ), roll_in as (
              insert into crawler_rollup (brand_id, day, path, bot, status, verification, account_id, vendor, kind, hits, last_seen)
              select brand_id, day, path, bot, status, verification, account_id, vendor, kind, n, ls from moved
              on conflict on constraint crawler_rollup_verdict_key do update
                set hits = crawler_rollup.hits + excluded.hits, last_seen = greatest(crawler_rollup.last_seen, excluded.last_seen)
            ), daily_out as (
              update crawler_daily d set hits = d.hits - m.n
              from (select account_id, brand_id, day, bot, status, sum(n)::int as n from moved group by 1, 2, 3, 4, 5) m
              where d.account_id = m.account_id and d.brand_id = m.brand_id and d.day = m.day and d.bot = m.bot and d.status is not distinct from m.status
                and d.verification = 'unverified'
            ), daily_in as (
              insert into crawler_daily (brand_id, day, bot, status, verification, account_id, vendor, kind, hits)
              select brand_id, day, bot, status, verification, account_id, min(vendor), min(kind), sum(n)::int
              from moved group by account_id, brand_id, day, bot, status, verification
              on conflict on constraint crawler_daily_verdict_key do update set hits = crawler_daily.hits + excluded.hits
            )
            select (select count(*) from upd where verification <> 'unverified')::int as changed,
                   (select array_agg(distinct brand_id)::int[] from moved) as brands`.pipe(singleRow(SettledRow))
          const moved = new Set(settled.brands ?? [])
          if (moved.size > 0) {
            // Rows emptied by the move: a read never lists a path or bot with no hits. The brands moved,
            // each with its account (brand ids are unique), for the keys that lead with the account.
            const keys = new Map<number, number>()
            for (const u of updates) if (moved.has(u.brandId)) keys.set(u.brandId, u.accountId)
            const accounts = [...keys.values()]
            const brands = [...keys.keys()]
            yield* background`
              delete from crawler_rollup r
              using unnest(${accounts}::bigint[], ${brands}::int[]) as k(account_id, brand_id)
              where r.account_id = k.account_id and r.brand_id = k.brand_id and r.verification = 'unverified' and r.hits = 0`
            yield* background`
              delete from crawler_daily d
              using unnest(${accounts}::bigint[], ${brands}::int[]) as k(account_id, brand_id)
              where d.account_id = k.account_id and d.brand_id = k.brand_id and d.verification = 'unverified' and d.hits = 0`
          }
          return settled.changed
        })).pipe(Effect.orDie)
    }
  })
)
