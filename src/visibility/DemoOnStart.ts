import { Config, Effect, Layer } from "effect"
import { printDemoReport, runDemo } from "./Demo.js"

/** `DEMO=1 bun run start`: the demo workspace is created or refreshed in the server process, before it listens. */
export const DemoOnStartLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const demo = yield* Config.string("DEMO").pipe(Config.withDefault(""))
    if (demo !== "1" && demo.toLowerCase() !== "true") return
    yield* Effect.logInfo("DEMO=1: creating the demo workspace")
    yield* printDemoReport(yield* runDemo())
  })
)
