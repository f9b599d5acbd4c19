import { Effect, Layer } from "effect"
import { now } from "../platform/Time.js"
import { rollStaleSpans, untilNextDay } from "./Retention.js"

/**
 * Keeps every read brand's 7/30/90-day spans ending today before a reader asks (docs/agents.md,
 * docs/performance.md): once when the services start (a process started after midnight UTC, or
 * after being down for days, finds spans ending on an earlier day) and one second after each
 * midnight UTC. Runs in the background: start-up does not wait for it. A reader arriving first
 * moves the spans itself, exactly the same way (the state row's lock orders them); a failed roll is
 * logged and the next midnight, the retention pass or a reader does it.
 * Time comes from the Effect Clock: tests drive the fiber with TestClock.
 */
export const SpanRollerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const roll = rollStaleSpans.pipe(Effect.catchAllCause((cause) => Effect.logWarning("span roll failed", cause)))
    yield* Effect.forkScoped(
      roll.pipe(
        Effect.zipRight(Effect.forever(
          Effect.gen(function*() {
            yield* Effect.sleep(untilNextDay((yield* now).getTime()))
            yield* roll
          })
        ))
      )
    )
  })
)
