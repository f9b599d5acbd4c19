import { Context, Effect, Layer } from "effect"
import { AgentsConfig } from "./Config.js"
import { AgentsRepo } from "./Repo.js"

/**
 * The rollup aggregator (docs/performance.md): a delivery only appends its new hits (crawler_hits and
 * the queue, crawler_fold_queue); this folds the queue into crawler_rollup, crawler_daily and the
 * 7/30/90-day spans in micro-batches, each batch deleted from the queue in the transaction that adds
 * it, under an advisory lock one process holds at a time. Reads add the queue to the rollups, so they
 * are exact whether or not a fold ran: the aggregator's pace only sets how much a read adds.
 */
export interface RollupAggregatorShape {
  /**
   * Folds the queued hits, a batch at a time, until a batch comes back short; returns how many it
   * folded. 0 at once when another process is folding (it holds the lock and goes on).
   */
  readonly foldNow: Effect.Effect<number>
}

export class RollupAggregator extends Context.Tag("RollupAggregator")<RollupAggregator, RollupAggregatorShape>() {}

/** Hits a fold takes in one transaction: the rows it updates grow with the distinct keys, not the hits. */
export const FOLD_BATCH = 20_000

/**
 * Hits folded between two upkeeps (AgentsRepo.upkeep: the queue's vacuum, the rollups' statistics):
 * under a steady load about one a second, each a few milliseconds.
 */
export const UPKEEP_EVERY = 5_000

/** Folds until a batch comes back short (or another process holds the lock): what foldNow does. */
export const foldQueued: Effect.Effect<number, never, AgentsRepo> = Effect.gen(function*() {
  const repo = yield* AgentsRepo
  let total = 0
  for (;;) {
    const folded = yield* repo.fold(FOLD_BATCH)
    if (folded === null) return total
    total += folded
    if (folded < FOLD_BATCH) return total
  }
})

/** The service alone: folds when asked (tests drive it; a command line process has no schedule). */
export const RollupAggregatorLive = Layer.effect(
  RollupAggregator,
  Effect.map(AgentsRepo, (repo) => ({ foldNow: Effect.provideService(foldQueued, AgentsRepo, repo) }))
)

/**
 * The service and its schedule: a fold when the services start (hits a stopped process left queued)
 * and then every foldEveryMs while hits keep coming, four times as long after a probe that found none.
 * The fiber lives as long as the services; a failed fold is logged and tried again at the next tick
 * (its transaction rolled back: the hits are still queued). Time comes from the Effect Clock.
 */
export const RollupAggregatorScheduled = Layer.scoped(
  RollupAggregator,
  Effect.gen(function*() {
    const repo = yield* AgentsRepo
    const config = yield* AgentsConfig
    const service: RollupAggregatorShape = { foldNow: Effect.provideService(foldQueued, AgentsRepo, repo) }
    let sinceUpkeep = 0
    const upkeep = Effect.suspend(() => {
      if (sinceUpkeep < UPKEEP_EVERY) return Effect.void
      sinceUpkeep = 0
      return repo.upkeep.pipe(Effect.catchAllCause((cause) => Effect.logWarning("rollup upkeep failed", cause)))
    })
    const tick = Effect.flatMap(repo.queued, (queued) => (queued ? service.foldNow : Effect.succeed(0))).pipe(
      Effect.tap((folded) => Effect.zipRight(Effect.sync(() => (sinceUpkeep += folded)), upkeep)),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("rollup fold failed", cause), 0))
    )
    // Every foldEveryMs while hits keep coming; four times as long after a look that found none.
    const next = (folded: number) => Effect.flatMap(Effect.sleep(folded > 0 ? config.foldEveryMs : config.foldEveryMs * 4), () => tick)
    yield* Effect.forkScoped(Effect.flatMap(tick, (first) => Effect.iterate(first, { while: () => true, body: next })))
    return service
  })
)
