import { Effect } from "effect"

/**
 * Long synchronous work in slices: a request that analyses thousands of records gives the event loop a
 * turn (other requests, timers, I/O) between them, so no request holds the process for long.
 */

/**
 * One turn of the event loop, then on: a timer, so that due timers, pending I/O and other requests run
 * first (under Bun an immediate can run again before them).
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setTimeout(() => resume(Effect.void), 0)
  return Effect.sync(() => clearTimeout(handle))
})

/** The synchronous work between two turns, at most (wall time, not the Effect Clock that tests control). */
export const WORK_SLICE_MS = 10

/**
 * A slicer for one loop: `tick` gives the event loop a turn once `sliceMs` of work has passed since the
 * last one, and costs a clock read otherwise.
 */
export const workSlicer = (sliceMs: number = WORK_SLICE_MS): { readonly tick: Effect.Effect<void> } => {
  let since = performance.now()
  return {
    tick: Effect.suspend(() =>
      performance.now() - since < sliceMs
        ? Effect.void
        : Effect.zipRight(yieldToEventLoop, Effect.sync(() => {
          since = performance.now()
        }))
    )
  }
}
