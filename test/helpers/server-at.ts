import { BunRuntime } from "@effect/platform-bun"
import { Effect, Layer, Logger } from "effect"
import { ServerLive } from "../../src/app/main.js"
import { fixedClock } from "./clock.js"

/**
 * The server of src/app/main.ts (the very same ServerLive layer), with its Clock standing still at
 * TEST_FIXED_NOW: the two-process test mode (test/helpers/servers.ts) runs this instead of
 * src/app/main.ts for a test app made with a fixed `now`, as the in-process app sets its Clock.
 * Test-only: production never reads TEST_FIXED_NOW.
 */
const text = process.env.TEST_FIXED_NOW ?? ""
const at = new Date(text)
if (Number.isNaN(at.getTime())) throw new Error(`TEST_FIXED_NOW must be an ISO date, got ${JSON.stringify(text)}`)

BunRuntime.runMain(
  Layer.launch(ServerLive).pipe(Effect.withClock(fixedClock(at)), Effect.provide(Logger.json)),
  { disablePrettyLogger: true }
)
