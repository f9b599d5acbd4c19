import { Effect, Layer, Schedule } from "effect"
import { DAY_MS, isoDay } from "../platform/Days.js"
import { TimePartitions } from "../platform/TimePartitions.js"
import { now } from "../platform/Time.js"
import { foldQueued } from "./Aggregator.js"
import { AgentsConfig } from "./Config.js"
import { AgentsRepo, type SweepResult } from "./Repo.js"

/**
 * Retention (docs/agents.md): raw crawler hits go once older than the horizon
 * (RAW_HIT_RETENTION_DAYS, default 30 days), rollup rows and AI referrals once their day is more than
 * ROLLUP_RETENTION_DAYS (400) days back. Hits and referrals are partitioned by time (docs/scale.md):
 * they go a whole partition at a time, once every row it can hold is past the horizon, so a hit
 * outlives the horizon by at most its partition's period (a week; a month for referrals). The same pass moves the 7/30/90-day spans of
 * brands whose spans end before today (SpanRoller.ts also does at start and just after each midnight
 * UTC), so readers rarely pay for it.
 * Time comes from the Effect Clock: tests drive the fiber with TestClock.
 */

/** Moves the spans of every brand whose spans end before today (UTC) to today. */
export const rollStaleSpans: Effect.Effect<void, never, AgentsRepo> = Effect.gen(function*() {
  const repo = yield* AgentsRepo
  const at = (yield* now).getTime()
  const today = isoDay(at)
  for (const { accountId, brandId } of yield* repo.staleSpans(today)) yield* repo.ensureSpans(accountId, brandId, today)
})

/** Milliseconds from `at` to the next midnight UTC, plus a second. */
export const untilNextDay = (at: number) => DAY_MS - (at % DAY_MS) + 1_000

/** A pass: the rollup rows it deleted, and the partitions of raw hits and referrals it dropped. */
export interface RetentionResult extends SweepResult {
  readonly hitPartitions: number
  readonly referralPartitions: number
}

export const retentionPass: Effect.Effect<RetentionResult, never, AgentsRepo | AgentsConfig | TimePartitions> = Effect.gen(function*() {
  const repo = yield* AgentsRepo
  const config = yield* AgentsConfig
  const partitions = yield* TimePartitions
  const at = (yield* now).getTime()
  const today = at - (at % DAY_MS)
  const rawBefore = new Date(at - config.rawRetentionDays * DAY_MS)
  // Kept: today and the (rollupRetentionDays - 1) days before it.
  const rollupBefore = today - (config.rollupRetentionDays - 1) * DAY_MS
  // The queued hits first (Aggregator.ts), so the sweep sees every stored hit in the rollups, as when
  // the deliveries wrote them there; hits queued after this are folded later and swept next time.
  yield* foldQueued
  const result = yield* repo.sweep(rawBefore, isoDay(rollupBefore))
  const hitPartitions = yield* partitions.dropBefore("crawler_hits", rawBefore)
  const referralPartitions = yield* partitions.dropBefore("ai_referrals", new Date(rollupBefore))
  yield* rollStaleSpans
  return { ...result, hitPartitions, referralPartitions }
})

/**
 * The scheduled fiber: a pass every sweepEveryMs (the first one sweepEveryMs after start, so a process
 * that only runs a command does no sweeping); a failed pass is logged and retried next time.
 */
export const RetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AgentsConfig
    const pass = retentionPass.pipe(
      Effect.tap((r) =>
        r.hitPartitions + r.rollup + r.daily + r.referralPartitions > 0
          ? Effect.logInfo(
            `retention: dropped ${r.hitPartitions} raw-hit and ${r.referralPartitions} referral partitions, deleted ${r.rollup + r.daily} rollup rows`
          )
          : Effect.void
      ),
      Effect.catchAllCause((cause) => Effect.logWarning("retention pass failed", cause))
    )
    yield* Effect.forkScoped(Effect.sleep(config.sweepEveryMs).pipe(Effect.zipRight(Effect.repeat(pass, Schedule.spaced(config.sweepEveryMs)))))
    // The roll at start and just after each midnight UTC is SpanRollerLive's (SpanRoller.ts).
  })
)
