import { Clock, Effect } from "effect"

/** A Clock standing still at `at` (sleep delegates to the real clock). */
export const fixedClock = (at: Date): Clock.Clock => {
  const real = Clock.make()
  const ms = at.getTime()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => ms,
    currentTimeMillis: Effect.succeed(ms),
    unsafeCurrentTimeNanos: () => BigInt(ms) * 1_000_000n,
    currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
    sleep: (duration) => real.sleep(duration)
  }
}
