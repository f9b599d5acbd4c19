import { Duration, Effect, FiberSet, Layer, Queue } from "effect"
import { type BrandKey, Brands, BrandsLive } from "../brands/Brands.js"
import { Ingestion, IngestionLive } from "../ingestion/Ingestion.js"
import { DAY_MS } from "../platform/Days.js"
import { now } from "../platform/Time.js"
import { Alerts, makeEvent, AlertsLive } from "./Alerts.js"
import { WebhooksConfig } from "./Config.js"
import { type ClaimedDelivery, type NewEvent, WebhooksRepo } from "./Repo.js"
import { signatureHeader } from "./Signing.js"
import { checkWebhookUrl, AddressResolver, pinnedTarget } from "./Ssrf.js"

/**
 * The background sender (docs/webhooks.md, "Delivery"): a fiber living as long as the server's
 * services. Whenever one of its `concurrency` slots is free it claims due deliveries (row locks
 * with SKIP LOCKED and a lease: one process sends each attempt, a crashed sender's rows come back
 * when the lease ends), fairly across accounts: round-robin, and never more than
 * `accountConcurrency` attempts of one account in flight across every process, so one account's
 * slow receivers or backlog cannot hold the slots another account's delivery needs. Each attempt
 * (resolution included) is bounded by the timeout and recorded: delivered on a 2xx, else retried
 * after the schedule's next wait (with jitter) or failed when the schedule is spent.
 */

/** A lease outlives the longest attempt (the timeout) with room for the bookkeeping. */
const LEASE_MARGIN_MS = 30_000

/**
 * What the delivery log says of an attempt that got no answer: a coarse class, never the client's
 * own text (an errno, an address, a certificate's names), so the log is no port or host scanner.
 */
export const errorClass = (error: unknown): "timeout" | "tls error" | "connection failed" => {
  const text = error instanceof Error
    ? `${error.name} ${"code" in error && typeof error.code === "string" ? error.code : ""} ${error.message}`
    : String(error)
  if (/timeout|timed out|abort/i.test(text)) return "timeout"
  if (/cert|tls|ssl|altname|self[ _-]?signed|handshake|issuer/i.test(text)) return "tls error"
  return "connection failed"
}

/**
 * Connections are not reused: each attempt opens its own to the address checked for it, so no
 * pooled connection (opened for another name or an earlier answer) carries a delivery.
 */
const session = new Bun.FetchSession({ keepAlive: false })

/**
 * One POST to a URL pinned to its checked address (`pinnedTarget`): the client connects to that
 * IP and resolves nothing; the original name goes in the `host` header and, for https, as the TLS
 * server name the certificate is verified against. Redirects come back as the 3xx answer, never
 * followed. `ca` adds a trusted certificate (tests with a local https receiver).
 */
export const postPinned = async (
  target: NonNullable<ReturnType<typeof pinnedTarget>>,
  init: { readonly headers: Record<string, string>; readonly body: string; readonly signal: AbortSignal },
  ca?: string
): Promise<number> => {
  const tls = {
    ...(target.serverName === null ? {} : { serverName: target.serverName }),
    ...(ca === undefined ? {} : { ca })
  }
  const response = await fetch(target.url, {
    method: "POST",
    headers: { ...init.headers, host: target.host },
    body: init.body,
    redirect: "manual",
    signal: init.signal,
    session,
    tls
  })
  // The answer's body is not needed: drop it unread.
  await response.body?.cancel().catch(() => undefined)
  return response.status
}

/** The wait before the next attempt: the schedule's, ±10% so that retries of many deliveries spread out. */
export const jittered = (seconds: number): number => seconds * 1000 * (0.9 + Math.random() * 0.2)

export const SenderLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const alerts = yield* Alerts
    const config = yield* WebhooksConfig
    const resolver = yield* AddressResolver

    const post = (delivery: ClaimedDelivery, at: Date) =>
      Effect.gen(function*() {
        // Checked again on the addresses the name resolves to now (DNS may have changed since the URL
        // was saved), and the request goes to the address checked here, not to a second resolution.
        const check = yield* checkWebhookUrl(delivery.url, config.allowPrivate).pipe(Effect.provideService(AddressResolver, resolver))
        if (check._tag === "Refused") return { status: null, error: `refused: ${check.reason}` }
        const timestamp = Math.floor(at.getTime() / 1000)
        const secrets = delivery.previousSecret !== null && delivery.previousSecretUntil !== null && delivery.previousSecretUntil > at
          ? [delivery.secret, delivery.previousSecret]
          : [delivery.secret]
        const target = pinnedTarget(check)
        if (target === null) return { status: null, error: "refused: the address cannot be connected to" }
        return yield* Effect.tryPromise({
          try: (signal) =>
            postPinned(target, {
              headers: {
                "content-type": "application/json",
                "user-agent": "ai-visibility-webhooks/1",
                "webhook-id": delivery.eventId,
                "webhook-timestamp": String(timestamp),
                "webhook-signature": signatureHeader(secrets, delivery.eventId, timestamp, delivery.body)
              },
              body: delivery.body,
              signal
            }),
          catch: errorClass
        }).pipe(
          Effect.map((status) => ({ status, error: status >= 200 && status < 300 ? null : `HTTP ${status}` })),
          Effect.catchAll((error) => Effect.succeed({ status: null, error }))
        )
      }).pipe(
        // The whole attempt, the name's resolution included, within the timeout (interrupting aborts the request).
        Effect.timeoutTo({
          duration: Duration.millis(config.timeoutMs),
          onSuccess: (result): { status: number | null; error: string | null } => result,
          onTimeout: () => ({ status: null, error: "timeout" })
        })
      )

    // An attempt cut short by a shutdown gives its row back at once; once it has an answer, its
    // recording is not interrupted.
    const send = (delivery: ClaimedDelivery) =>
      Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
        const at = yield* now
        const started = Date.now()
        const result = yield* restore(post(delivery, at)).pipe(Effect.onInterrupt(() => repo.release(delivery.id)))
        const attempt = delivery.attempts + 1
        const delivered = result.error === null
        const wait = config.retrySchedule[attempt - 1]
        const status = delivered ? "delivered" : wait === undefined ? "failed" : "pending"
        const finishedAt = yield* now
        yield* repo.finishAttempt({
          deliveryId: delivery.id,
          endpointId: delivery.endpointId,
          attempt,
          at,
          responseStatus: result.status,
          error: result.error,
          durationMs: Math.max(0, Date.now() - started),
          status,
          nextAttemptAt: status === "pending" ? new Date(finishedAt.getTime() + jittered(wait!)) : null,
          disableIfFailingSince: new Date(at.getTime() - config.disableAfterMs)
        })
      })).pipe(Effect.catchAllCause((cause) => Effect.logWarning(`webhook delivery ${delivery.id} not recorded`, cause)))

    // The attempts in flight in this process; each frees its slot (and wakes the dispatcher) when done.
    const inFlight = yield* FiberSet.make()
    const freed = yield* Queue.sliding<void>(1)
    let busy = 0

    /** Fills the free slots with due deliveries (fairly across accounts, see `claimDue`). */
    const dispatch = Effect.gen(function*() {
      const free = config.concurrency - busy
      if (free <= 0) return
      const at = yield* now
      const claimed = yield* repo.claimDue(at, new Date(at.getTime() + config.timeoutMs + LEASE_MARGIN_MS), free, config.accountConcurrency)
      for (const delivery of claimed) {
        busy++
        yield* FiberSet.run(inFlight, send(delivery).pipe(Effect.ensuring(Effect.zipRight(Effect.sync(() => busy--), Queue.offer(freed, undefined)))))
      }
    })

    // Woken by a delivery written here, by a finished attempt, or by the poll (another process's writes).
    const idle = Effect.raceAll([Queue.take(alerts.wakeups), Queue.take(freed), Effect.sleep(Duration.millis(config.pollMs))])

    yield* Effect.forkScoped(
      Effect.forever(
        dispatch.pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("webhook sender round failed", cause)),
          Effect.zipRight(idle)
        )
      )
    )
  })
).pipe(Layer.provide(AlertsLive))

/**
 * The background alert checks: ingestion.stalled for every channel that delivered in the last 7
 * days and has been quiet for ALERT_STALL_HOURS (once per quiet spell: its key is the last
 * delivery's time), crawler.spoofed_surge for a bot with ALERT_SPOOFED_MIN or more hits judged
 * spoofed in the last hour, and the pruning of ingestion health past 30 days and of events (with
 * their deliveries) past 90 days.
 */
export const AlertChecksLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const alerts = yield* Alerts
    const config = yield* WebhooksConfig
    const brands = yield* Brands
    const ingestion = yield* Ingestion

    /** One event per row whose brand still exists (a deleted brand has no slug and no alert). */
    const emitForBrands = <R extends BrandKey>(rows: ReadonlyArray<R>, event: (row: R, slug: string) => NewEvent) =>
      Effect.flatMap(brands.slugs(rows), (slugs) =>
        alerts.emit(rows.flatMap((row) => {
          const slug = slugs.get(row.brandId)
          return slug === undefined ? [] : [event(row, slug)]
        })))

    const check = Effect.gen(function*() {
      const at = yield* now
      const stalled = yield* repo.stalledChannels(new Date(at.getTime() - 7 * DAY_MS), new Date(at.getTime() - config.stallHours * 3_600_000))
      yield* emitForBrands(stalled, (s, slug) =>
        makeEvent(s.accountId, "ingestion.stalled", `${s.brandId}:${s.channel}:${s.lastReceivedAt.toISOString()}`, at, {
          brand_slug: slug,
          channel: s.channel,
          last_received_at: s.lastReceivedAt.toISOString()
        }))
      // crawler.spoofed_surge: once per brand, bot and clock hour while the surge lasts, among the brands
      // that received deliveries in the last two hours (the verdicts are the Ingestion service's to read).
      const hour = new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000).toISOString()
      const active = yield* repo.activeBrands(new Date(at.getTime() - 2 * 3_600_000))
      const surges = yield* ingestion.spoofedCounts(active, new Date(at.getTime() - 3_600_000), config.spoofedMin)
      yield* emitForBrands(surges, (s, slug) =>
        makeEvent(s.accountId, "crawler.spoofed_surge", `${s.brandId}:${s.bot}:${hour}`, at, {
          brand_slug: slug,
          bot: s.bot,
          spoofed_hits: s.spoofed,
          window_hours: 1
        }))
      yield* repo.pruneHealth(new Date(at.getTime() - 30 * DAY_MS))
      // 90 days outlive every dedup key's window (a month, 35 days of citations), so no event comes back.
      yield* repo.pruneEvents(new Date(at.getTime() - 90 * DAY_MS))
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("alert checks failed", cause)))

    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(config.checkEveryMs)), check)))
  })
).pipe(Layer.provide(IngestionLive), Layer.provide([BrandsLive, AlertsLive]))
