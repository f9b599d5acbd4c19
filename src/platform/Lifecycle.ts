import type { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { metrics } from "./Metrics.js"

/**
 * The process lifecycle as the requests see it: how many are in flight, and whether the process
 * is draining at SIGTERM (docs/operations.md). Graceful shutdown (src/app/Shutdown.ts) drives it.
 */

interface StoppableServer {
  readonly stop: (closeActiveConnections: boolean) => void
}

/** The Bun server a request came through, when the platform's request carries one (Bun's does). */
const bunServerOf = (request: HttpServerRequest.HttpServerRequest): StoppableServer | undefined => {
  if (!("bunServer" in request)) return undefined
  const server = request.bunServer
  if (typeof server !== "object" || server === null || !("stop" in server)) return undefined
  const stop = server.stop
  return typeof stop === "function" ? { stop: (close) => void stop.call(server, close) } : undefined
}

export class LifecycleState {
  draining = false
  inFlight = 0
  private server: StoppableServer | undefined
  private waiters: Array<() => void> = []

  /** The Bun server a request came through (so draining can stop it listening). */
  noteServer(request: HttpServerRequest.HttpServerRequest): void {
    if (this.server === undefined) this.server = bunServerOf(request)
  }

  begin(): void {
    this.inFlight++
    metrics.inFlight = this.inFlight
  }

  end(): void {
    this.inFlight--
    metrics.inFlight = this.inFlight
    if (this.inFlight === 0 && this.waiters.length > 0) {
      const waiters = this.waiters
      this.waiters = []
      for (const wake of waiters) wake()
    }
  }

  /** Stop taking new work: /readyz turns 503, new requests get 503, the listening socket closes. */
  startDraining(): void {
    if (this.draining) return
    this.draining = true
    try {
      // Graceful: Bun stops accepting connections and lets requests in progress finish.
      this.server?.stop(false)
    } catch {
      // already stopped
    }
  }

  /** Completes when no request is in flight. */
  readonly idle: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.inFlight <= 0) return resume(Effect.void)
    this.waiters.push(() => resume(Effect.void))
  })
}

export class Lifecycle extends Context.Tag("Lifecycle")<Lifecycle, LifecycleState>() {}

export const LifecycleLive = Layer.sync(Lifecycle, () => new LifecycleState())
