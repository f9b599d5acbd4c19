import { Cause, Config, Effect, Layer } from "effect"
import { now } from "../platform/Time.js"
import { WorkspaceFill } from "../platform/WorkspaceFill.js"
import { fillDemo, prepareDemo, printPreparedDemo } from "./Demo.js"

/**
 * `DEMO=1 bun run start`: the demo workspace's account, brands, prompts, key and scan status are made
 * before the server listens (seconds); its days of observations and crawler traffic are written by a
 * fiber in the background, newest days first, while the server already answers (docs/observations.md).
 * GET /api/v1/me reports the fill (`data_fill`) to the demo account, so the web application says the
 * workspace is still filling in. The fiber lives in this layer's scope: a shutdown interrupts it.
 * `DEMO_DAYS` (1..400, default 90) shortens the history, e.g. for the browser test.
 */
export const DemoOnStartLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const demo = yield* Config.string("DEMO").pipe(Config.withDefault(""))
    if (demo !== "1" && demo.toLowerCase() !== "true") return
    const days = yield* Config.integer("DEMO_DAYS").pipe(
      Config.withDefault(90),
      Config.validate({ message: "DEMO_DAYS must be 1..400", validation: (n) => n >= 1 && n <= 400 })
    )
    const fills = yield* WorkspaceFill
    yield* Effect.logInfo(`DEMO=1: creating the demo workspace (${days} days)`)
    const prepared = yield* prepareDemo({ days })
    const startedAt = yield* now
    const progress = (daysFilled: number) => ({ status: "filling" as const, days, daysFilled, startedAt, finishedAt: null })
    yield* fills.set(prepared.accountId, progress(0))
    yield* printPreparedDemo(prepared)
    yield* fillDemo(prepared, (daysFilled) => fills.set(prepared.accountId, progress(daysFilled))).pipe(
      Effect.zipRight(Effect.gen(function*() {
        const finishedAt = yield* now
        yield* fills.set(prepared.accountId, { status: "ready", days, daysFilled: days, startedAt, finishedAt })
        yield* Effect.logInfo(`DEMO=1: demo workspace filled (${days} days) in ${((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(1)} s`)
      })),
      Effect.onError((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.void : Effect.gen(function*() {
          yield* fills.set(prepared.accountId, { status: "failed", days, daysFilled: 0, startedAt, finishedAt: yield* now })
          yield* Effect.logError("DEMO=1: filling the demo workspace failed", cause)
        })),
      Effect.forkScoped
    )
  })
)
