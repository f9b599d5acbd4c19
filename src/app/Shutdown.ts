import { Duration, Effect, Layer } from "effect"
import { ApiKeys } from "../accounts/ApiKeys.js"
import { type Ingestion, replaySpool } from "../ingestion/Ingestion.js"
import { Spool } from "../ingestion/Spool.js"
import { AppConfig } from "../platform/Config.js"
import { Lifecycle } from "../platform/Lifecycle.js"
import { RequestLog } from "../platform/RequestLog.js"

/**
 * Graceful shutdown (docs/operations.md). Built after the HTTP server, so its finalizer runs
 * first when SIGTERM interrupts the program: stop accepting (the listening socket closes,
 * /readyz and new requests answer 503), wait for the requests in flight, replay what the
 * drain spool holds while the database answers, write pending API-key last-used times. All of
 * it within SHUTDOWN_GRACE_MS; then the server, the services and the database pool close in
 * reverse order of start. What the spool still holds stays on disk for the next start.
 */
export const GracefulShutdownLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const config = yield* AppConfig
    const spool = yield* Spool
    const keys = yield* ApiKeys
    const requestLog = yield* RequestLog
    const flushSpool = Effect.provide(replaySpool, yield* Effect.context<Spool | Ingestion>())

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const deadline = Date.now() + config.shutdownGraceMs
        const left = () => Duration.millis(Math.max(0, deadline - Date.now()))
        // One turn of the event loop first: requests whose bytes the sockets already hold (sent before
        // the signal, unread while the thread was busy, e.g. in the embedded database) are read and
        // admitted. Stopping first would close their connections unanswered.
        yield* Effect.sleep(Duration.zero)
        lifecycle.startDraining()
        yield* Effect.logInfo(`shutdown: stopped accepting; ${lifecycle.inFlight} request(s) in flight`)
        const drained = yield* lifecycle.idle.pipe(Effect.timeoutOption(left()))
        if (drained._tag === "None") {
          yield* Effect.logWarning(`shutdown: grace period over with ${lifecycle.inFlight} request(s) still in flight`)
        }
        const spooled = yield* flushSpool.pipe(Effect.timeoutOption(left()))
        const pending = (yield* spool.pending).length
        yield* keys.flushLastUsed.pipe(Effect.timeoutOption(Duration.seconds(2)), Effect.catchAllCause(Effect.logWarning))
        requestLog.flush()
        yield* Effect.logInfo(
          `shutdown: in-flight done; spool ${
            spooled._tag === "Some" ? `replayed ${spooled.value.replayed}` : "flush timed out"
          }, ${pending} file(s) left for the next start; last-used times written`
        )
      })
    )
  })
)
