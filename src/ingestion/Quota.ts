import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"

/**
 * The monthly server-log event cap (decisions.md "Plans"): stored crawler hits per account and
 * calendar month (UTC), shared by both ingestion endpoints, exact under concurrent deliveries.
 */
export interface QuotaShape {
  /** Hits stored in that month so far. */
  readonly used: (accountId: number, month: string) => Effect.Effect<number>
  /**
   * Runs `store` with the room left under `cap` while holding the account's usage row for that
   * month: a concurrent delivery waits, then sees what this one stored. `store` returns how many
   * hits it stored and must add them to monthly_usage in the same transaction (HitsRepo.store does).
   */
  readonly withinCap: <E, R>(
    accountId: number,
    month: string,
    cap: number,
    store: (room: number) => Effect.Effect<number, E, R>
  ) => Effect.Effect<{ readonly room: number; readonly stored: number; readonly used: number }, E, R>
}

export class Quota extends Context.Tag("Quota")<Quota, QuotaShape>() {}

/**
 * The lock is the usage row itself, taken by an upsert (one round trip creates the month's row
 * when missing and locks it): the same exactness as AccountsRepo.withAccountLock, one query fewer.
 */
export const QuotaLive = Layer.effect(
  Quota,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      used: (accountId, month) =>
        sql<{ events: number }>`
          select events::int as events from monthly_usage where account_id = ${accountId} and month = ${month}::date`.pipe(
          Effect.map((rows) => rows[0]?.events ?? 0),
          Effect.orDie
        ),
      withinCap: (accountId, month, cap, store) =>
        sql.withTransaction(
          Effect.gen(function*() {
            const rows = yield* sql<{ events: number }>`
              insert into monthly_usage (account_id, month, events) values (${accountId}, ${month}::date, 0)
              on conflict (account_id, month) do update set events = monthly_usage.events
              returning events::int as events`.pipe(Effect.orDie)
            const before = rows[0]?.events ?? 0
            const room = Math.max(0, cap - before)
            const stored = yield* store(room)
            return { room, stored, used: before + stored }
          })
        ).pipe(Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die))
    }
  })
)
