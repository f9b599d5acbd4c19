import { Effect, Layer, Schedule } from "effect"
import { now } from "../platform/Time.js"
import { AgentsConfig } from "./Config.js"
import { AgentsRepo, type SweepResult } from "./Repo.js"

/**
 * Retention (metrics.md section 3, docs/agents.md): raw crawler hits are deleted once older than the
 * horizon (RAW_HIT_RETENTION_DAYS, default 30 days), rollup rows and AI referrals once their day is
 * more than ROLLUP_RETENTION_DAYS (400) days back. The same pass moves the 7/30/90-day spans of
 * brands whose spans end before today (SpanRoller.ts also does at start and just after each midnight
 * UTC), so readers rarely pay for it.
 * Time comes from the Effect Clock: tests drive the fiber with TestClock.
 */

const DAY_MS = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** Moves the spans of every brand whose spans end before today (UTC) to today. */
export const rollStaleSpans: Effect.Effect<void, never, AgentsRepo> = Effect.gen(function*() {
  const repo = yield* AgentsRepo
  const at = (yield* now).getTime()
  const today = isoDay(at - (at % DAY_MS))
  for (const brandId of yield* repo.staleSpans(today)) yield* repo.ensureSpans(brandId, today)
})

/** Milliseconds from `at` to the next midnight UTC, plus a second. */
export const untilNextDay = (at: number) => DAY_MS - (at % DAY_MS) + 1_000

export const retentionPass: Effect.Effect<SweepResult, never, AgentsRepo | AgentsConfig> = Effect.gen(function*() {
  const repo = yield* AgentsRepo
  const config = yield* AgentsConfig
  const at = (yield* now).getTime()
  const today = at - (at % DAY_MS)
  const result = yield* repo.sweep(
    new Date(at - config.rawRetentionDays * DAY_MS),
    // Kept: today and the (rollupRetentionDays - 1) days before it.
    isoDay(today - (config.rollupRetentionDays - 1) * DAY_MS)
  )
  yield* rollStaleSpans
  return result
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
        r.hits + r.rollup + r.daily + r.referrals > 0
          ? Effect.logInfo(`retention: deleted ${r.hits} raw hits, ${r.rollup + r.daily} rollup rows, ${r.referrals} referrals`)
          : Effect.void
      ),
      Effect.catchAllCause((cause) => Effect.logWarning("retention pass failed", cause))
    )
    yield* Effect.forkScoped(Effect.sleep(config.sweepEveryMs).pipe(Effect.zipRight(Effect.repeat(pass, Schedule.spaced(config.sweepEveryMs)))))
    // The roll at start and just after each midnight UTC is SpanRollerLive's (SpanRoller.ts).
  })
)
