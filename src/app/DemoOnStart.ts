import { Config, Effect, Layer } from "effect"
import { printDemoReport, runDemo } from "./Demo.js"

/**
 * `DEMO=1 bun run start`: the demo workspace is created or refreshed in the server process, before it
 * listens. `DEMO_DAYS` (1..400, default 90) shortens the history, e.g. for the browser test.
 */
export const DemoOnStartLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const demo = yield* Config.string("DEMO").pipe(Config.withDefault(""))
    if (demo !== "1" && demo.toLowerCase() !== "true") return
    const days = yield* Config.integer("DEMO_DAYS").pipe(
      Config.withDefault(90),
      Config.validate({ message: "DEMO_DAYS must be 1..400", validation: (n) => n >= 1 && n <= 400 })
    )
    yield* Effect.logInfo(`DEMO=1: creating the demo workspace (${days} days)`)
    yield* printDemoReport(yield* runDemo({ days }))
  })
)
