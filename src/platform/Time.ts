import { Clock, Effect } from "effect"

/** The current time from the Effect Clock, so tests can control it. */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
