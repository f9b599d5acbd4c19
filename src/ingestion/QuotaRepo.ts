import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { firstRow, singleRow } from "../platform/Rows.js"
import type { Stored, UsageOverCap } from "./HitsRepo.js"

/**
 * The monthly server-log event cap (docs/decisions.md "Plans"): stored crawler hits per account and
 * calendar month (UTC), shared by both ingestion endpoints, exact under concurrent deliveries.
 */
export interface QuotaRepoShape {
  /** Hits stored in that month so far. */
  readonly used: (accountId: number, month: string) => Effect.Effect<number>
  /**
   * Runs `store` with the room it may fill (at most `offered` hits), so that the month's usage never
   * ends above `cap`. `store` must add what it stored to monthly_usage atomically, fail with
   * UsageOverCap rather than pass `cap`, and say the usage after it (HitsRepo.store does all three).
   * `room` 0: the cap is reached.
   */
  readonly withinCap: <R>(
    accountId: number,
    month: string,
    cap: number,
    offered: number,
    store: (room: number) => Effect.Effect<Stored, UsageOverCap, R>
  ) => Effect.Effect<{ readonly room: number; readonly stored: number; readonly used: number }, never, R>
}

export class QuotaRepo extends Context.Tag("QuotaRepo")<QuotaRepo, QuotaRepoShape>() {}

/**
 * Two paths, both exact:
 * - Optimistic, while the whole delivery fits: one statement stores everything and adds it to the
 *   usage, whose row is taken by the statement's last step only, until its own commit; the row's
 *   check (migrations/0007) fails the statement whole when a concurrent delivery took the room.
 *   Deliveries of one account then wait on each other for the end of a statement, not for a whole
 *   transaction (one lock held across the store capped an account near 200 deliveries a second).
 * - Locked, near the cap: take the usage row first (an upsert: one round trip creates the month's
 *   row when missing and locks it), read the room, store at most that.
 * Which path to try first comes from the last usage this process saw; it only saves work, the
 * answer is the same either way.
 */
/** The account's stored events of a month (monthly_usage.events). */
const EventsRow = Schema.Struct({ events: Schema.Number })

export const QuotaRepoLive = Layer.effect(
  QuotaRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lastSeen = new Map<string, number>()
    const seen = (accountId: number, month: string, used: number) => {
      if (lastSeen.size > 100_000) lastSeen.clear()
      lastSeen.set(`${accountId}:${month}`, used)
    }

    const used = (accountId: number, month: string) =>
      sql`
        select events::int as events from monthly_usage where account_id = ${accountId} and month = ${month}::date`.pipe(
        firstRow(EventsRow),
        Effect.map(Option.match({ onNone: () => 0, onSome: (row) => row.events })),
        Effect.orDie
      )

    type Store<R> = (room: number) => Effect.Effect<Stored, UsageOverCap, R>

    const locked = <R>(accountId: number, month: string, cap: number, store: Store<R>) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const { events: before } = yield* sql`
            insert into monthly_usage (account_id, month, events) values (${accountId}, ${month}::date, 0)
            on conflict (account_id, month) do update set events = monthly_usage.events
            returning events::int as events`.pipe(singleRow(EventsRow), Effect.orDie)
          const room = Math.max(0, cap - before)
          // Called at 0 too: the delivery's AI referrals are stored whatever the cap. Holding the
          // row, the room is right: a guard failure here is a bug, not a race.
          const { stored } = yield* store(room).pipe(Effect.catchTag("UsageOverCap", Effect.die))
          return { room, stored, used: before + stored }
        })
      )

    const optimistic = <R>(accountId: number, month: string, cap: number, offered: number, store: Store<R>) =>
      Effect.flatMap(store(offered), (result) =>
        // Nothing new stored (a redelivery): the usage as it stands, for the answer.
        Effect.map(result.used === null ? used(accountId, month) : Effect.succeed(result.used), (after) => ({
          room: Math.max(0, cap - (after - result.stored)),
          stored: result.stored,
          used: after
        })))

    return {
      used,
      withinCap: (accountId, month, cap, offered, store) => {
        const last = lastSeen.get(`${accountId}:${month}`)
        const run = last === undefined || last + offered <= cap
          ? optimistic(accountId, month, cap, offered, store).pipe(
            Effect.catchTag("UsageOverCap", () => locked(accountId, month, cap, store))
          )
          : locked(accountId, month, cap, store)
        return run.pipe(
          Effect.tap((outcome) => Effect.sync(() => seen(accountId, month, outcome.used))),
          Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die)
        )
      }
    }
  })
)
