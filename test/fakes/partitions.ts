import { Effect, Layer } from "effect"
import { TimePartitions, type TimePartitionsShape } from "../../src/platform/TimePartitions.js"
import type { FakeHitsStore } from "./ingestion.js"

/**
 * In-memory TimePartitions with the contract of the SQL one over the fake hits store: crawler hits in
 * weeks (Monday, UTC), referrals in months; dropping a table's partitions before a horizon removes the
 * rows of every period that ends at or before it, and forgets their keys (as the SQL table does).
 */
const DAY = 86_400_000
const weekStart = (ms: number) => {
  const day = ms - (ms % DAY)
  return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY
}
const monthStart = (ms: number) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}
const periodEnd = (table: string, ms: number) => {
  if (table === "crawler_hits") return weekStart(ms) + 7 * DAY
  const start = new Date(monthStart(ms))
  return Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)
}

export const makeFakeTimePartitions = (store: FakeHitsStore, forget: (table: string, key: string) => void) => {
  const service: TimePartitionsShape = {
    ensureAhead: Effect.succeed(0),
    ensure: () => Effect.succeed(0),
    dropBefore: (table, before) =>
      Effect.sync(() => {
        const rows: Array<{ ts: number; key: string; brandId: number }> = table === "crawler_hits" ? store.hits : store.referrals
        const periods = new Set<number>()
        for (let i = rows.length - 1; i >= 0; i--) {
          const row = rows[i]!
          const end = periodEnd(table, row.ts)
          if (end <= before.getTime()) {
            periods.add(end)
            forget(table, `${row.brandId}|${row.key}`)
            rows.splice(i, 1)
          }
        }
        return periods.size
      }),
    list: () => Effect.succeed([])
  }
  return Layer.succeed(TimePartitions, service)
}
