import { Context, Effect, Layer, Option, Schema } from "effect"
import { Accounts, type SessionUser, AccountsLive } from "../accounts/Accounts.js"
import { Brands, BrandsLive } from "../brands/Brands.js"
import { Spool, SpoolLive } from "../ingestion/Spool.js"
import { type BadRequest, badRequest, type Forbidden, forbidden, type NotFound, notFound } from "../platform/HttpErrors.js"
import { now } from "../platform/Time.js"
import { Alerts, EVENT_TYPES, makeEvent, AlertsLive } from "./Alerts.js"
import type { ChannelHealth, Delivery, WebhookEndpoint } from "./Api.js"
import { WebhooksConfig } from "./Config.js"
import { type DeliveryRow, type EndpointRow, WebhooksRepo } from "./Repo.js"
import { newSecret } from "./Signing.js"
import { checkWebhookUrl, AddressResolver } from "./Ssrf.js"

/** The webhook endpoints of an account, their deliveries, the event log and ingestion health (docs/webhooks.md). */

/** The service's answers are the API's resources (webhooks/Api.ts), not shapes restated here. */
export type EndpointView = typeof WebhookEndpoint.Type
export type DeliveryView = typeof Delivery.Type
export type ChannelHealthView = typeof ChannelHealth.Type

export interface WebhookInput {
  readonly url?: string | undefined
  readonly events?: ReadonlyArray<string> | undefined
  readonly description?: string | null | undefined
  readonly enabled?: boolean | undefined
}

/** The account sent as many test pings as the window allows: the next one is possible in `retryAfterSeconds`. */
export class TestThrottled extends Schema.TaggedError<TestThrottled>()("TestThrottled", {
  limit: Schema.Number,
  windowSeconds: Schema.Number,
  retryAfterSeconds: Schema.Number
}) {}

export interface WebhooksShape {
  readonly create: (
    accountId: number,
    input: { readonly url: string; readonly events: ReadonlyArray<string>; readonly description?: string | null | undefined }
  ) => Effect.Effect<EndpointView & { readonly secret: string }, BadRequest | Forbidden>
  readonly list: (accountId: number) => Effect.Effect<{ readonly webhooks: ReadonlyArray<EndpointView>; readonly count: number }>
  readonly update: (accountId: number, id: string, input: WebhookInput) => Effect.Effect<EndpointView, BadRequest | NotFound>
  readonly remove: (accountId: number, id: string) => Effect.Effect<void, NotFound>
  readonly test: (accountId: number, id: string) => Effect.Effect<void, NotFound | TestThrottled>
  readonly rotate: (accountId: number, id: string) => Effect.Effect<{ readonly secret: string }, NotFound>
  readonly deliveries: (
    accountId: number,
    id: string
  ) => Effect.Effect<{ readonly deliveries: ReadonlyArray<DeliveryView>; readonly count: number }, NotFound>
  readonly retry: (accountId: number, id: string, deliveryId: string) => Effect.Effect<void, NotFound>
  readonly events: (accountId: number) => Effect.Effect<{
    readonly events: ReadonlyArray<{ readonly id: string; readonly type: string; readonly created_at: Date; readonly data: unknown }>
    readonly count: number
  }>
  readonly ingestion: (user: SessionUser, slug: string) => Effect.Effect<{
    readonly channels: ReadonlyArray<ChannelHealthView>
    readonly spool_pending: number
    readonly monthly_used: number
    readonly monthly_cap: number
  }, NotFound>
}

export class Webhooks extends Context.Tag("Webhooks")<Webhooks, WebhooksShape>() {}

const NO_WEBHOOK = notFound("webhook not found")
const NO_DELIVERY = notFound("delivery not found")
const MAX_DESCRIPTION = 500
const LIST_LIMIT = 100
const ROTATION_OVERLAP_MS = 24 * 3_600_000
/** Spool files read (one at a time) to count an account's pending deliveries: the spool is empty but during an outage. */
const SPOOL_SCAN_LIMIT = 200

const view = (row: EndpointRow): EndpointView => ({
  id: row.id,
  url: row.url,
  events: row.events,
  description: row.description,
  enabled: row.enabled,
  created_at: row.createdAt,
  disabled_reason: row.disabledReason,
  failing_since: row.failingSince
})

const deliveryView = (row: DeliveryRow): DeliveryView => ({
  id: row.id,
  event_id: row.eventId,
  type: row.type,
  status: row.status,
  attempts: row.attempts,
  response_status: row.responseStatus,
  created_at: row.createdAt,
  next_attempt_at: row.status === "pending" ? row.nextAttemptAt : null,
  delivered_at: row.deliveredAt,
  last_error: row.lastError,
  attempt_log: row.log.map((a) => ({
    attempt: a.attempt,
    at: a.at,
    response_status: a.responseStatus,
    error: a.error,
    duration_ms: a.durationMs
  }))
})

/** The event types, each once; a ping is sent by the test endpoint whatever the subscription. */
const checkEvents = (events: ReadonlyArray<string>): ReadonlyArray<string> | BadRequest => {
  if (events.length === 0) return badRequest("invalid events: at least one event type")
  const known: ReadonlyArray<string> = EVENT_TYPES
  const unknown = events.find((event) => !known.includes(event))
  if (unknown !== undefined) return badRequest(`unknown event type: ${JSON.stringify(unknown).slice(0, 100)}; one of ${EVENT_TYPES.join(", ")}`)
  return [...new Set(events)]
}

const checkDescription = (description: string | null | undefined): string | BadRequest => {
  const text = (description ?? "").trim()
  return text.length > MAX_DESCRIPTION ? badRequest(`invalid description: at most ${MAX_DESCRIPTION} characters`) : text
}

const isBadRequest = (value: unknown): value is BadRequest => typeof value === "object" && value !== null && "_tag" in value && value._tag === "BadRequest"

export const WebhooksLive = Layer.effect(
  Webhooks,
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const config = yield* WebhooksConfig
    const resolver = yield* AddressResolver
    const alerts = yield* Alerts
    const brands = yield* Brands
    const accounts = yield* Accounts
    const spool = yield* Spool

    const checkUrl = (url: string) =>
      checkWebhookUrl(url, config.allowPrivate).pipe(
        Effect.provideService(AddressResolver, resolver),
        // Stored as parsed: what was judged is what is shown and sent.
        Effect.flatMap((check) => (check._tag === "Refused" ? Effect.fail(badRequest(`invalid url: ${check.reason}`)) : Effect.succeed(check.url.href)))
      )

    const endpoint = (accountId: number, id: string) =>
      Effect.flatMap(repo.findEndpoint(accountId, id), Option.match({ onNone: () => Effect.fail(NO_WEBHOOK), onSome: Effect.succeed }))

    const orFail = <A>(value: A | BadRequest): Effect.Effect<A, BadRequest> => (isBadRequest(value) ? Effect.fail(value) : Effect.succeed(value))

    return {
      create: (accountId, input) =>
        Effect.gen(function*() {
          const events = yield* orFail(checkEvents(input.events))
          const description = yield* orFail(checkDescription(input.description))
          const url = yield* checkUrl(input.url)
          const secret = newSecret()
          // Counted and inserted under the account's lock: concurrent creates cannot pass the cap together.
          const row = yield* accounts.withAccountLock(accountId, Effect.gen(function*() {
            if ((yield* repo.countEndpoints(accountId)) >= config.maxEndpoints) {
              return yield* Effect.fail(forbidden(`webhook limit reached: at most ${config.maxEndpoints} endpoints per account`))
            }
            return yield* repo.createEndpoint({
              id: crypto.randomUUID(),
              accountId,
              url,
              events,
              description,
              secret,
              createdAt: yield* now
            })
          }))
          return { ...view(row), secret }
        }),

      list: (accountId) =>
        Effect.map(repo.listEndpoints(accountId), (rows) => ({ webhooks: rows.map(view), count: rows.length })),

      update: (accountId, id, input) =>
        Effect.gen(function*() {
          yield* endpoint(accountId, id)
          const events = input.events === undefined ? undefined : yield* orFail(checkEvents(input.events))
          const description = input.description === undefined ? undefined : yield* orFail(checkDescription(input.description))
          const url = input.url === undefined ? undefined : yield* checkUrl(input.url)
          const row = yield* repo.updateEndpoint(accountId, id, { url, events, description, enabled: input.enabled })
          return yield* Option.match(row, { onNone: () => Effect.fail(NO_WEBHOOK), onSome: (r) => Effect.succeed(view(r)) })
        }),

      remove: (accountId, id) =>
        Effect.flatMap(repo.deleteEndpoint(accountId, id), (deleted) => (deleted ? Effect.void : Effect.fail(NO_WEBHOOK))),

      test: (accountId, id) =>
        Effect.gen(function*() {
          const row = yield* endpoint(accountId, id)
          const { limit, windowSeconds } = config.testLimit
          // A sliding window over the account's stored pings, checked and written under the account's
          // lock: exact across server processes, whatever the shared rate-limit store.
          yield* accounts.withAccountLock(accountId, Effect.gen(function*() {
            const at = yield* now
            const windowMs = windowSeconds * 1000
            const oldest = yield* repo.nthNewestEvent(accountId, "ping", new Date(at.getTime() - windowMs), limit)
            if (oldest !== null) {
              const retryAfterSeconds = Math.max(1, Math.ceil((oldest.getTime() + windowMs - at.getTime()) / 1000))
              return yield* Effect.fail(new TestThrottled({ limit, windowSeconds, retryAfterSeconds }))
            }
            yield* repo.emitTo(row.id, makeEvent(accountId, "ping", crypto.randomUUID(), at, { webhook_id: row.id }))
          }))
          yield* alerts.wake
        }),

      rotate: (accountId, id) =>
        Effect.gen(function*() {
          const secret = newSecret()
          const until = new Date((yield* now).getTime() + ROTATION_OVERLAP_MS)
          const rotated = yield* repo.rotateSecret(accountId, id, secret, until)
          if (!rotated) return yield* Effect.fail(NO_WEBHOOK)
          return { secret }
        }),

      deliveries: (accountId, id) =>
        Effect.gen(function*() {
          yield* endpoint(accountId, id)
          const rows = yield* repo.listDeliveries(accountId, id, LIST_LIMIT)
          return { deliveries: rows.map(deliveryView), count: rows.length }
        }),

      retry: (accountId, id, deliveryId) =>
        Effect.gen(function*() {
          const retried = yield* repo.retryDelivery(accountId, id, deliveryId, yield* now)
          if (!retried) return yield* Effect.fail(NO_DELIVERY)
          yield* alerts.wake
        }),

      events: (accountId) =>
        Effect.map(repo.listEvents(accountId, LIST_LIMIT), (rows) => {
          const events = rows.map((row) => {
            const parsed: unknown = JSON.parse(row.body)
            const data = typeof parsed === "object" && parsed !== null && "data" in parsed ? parsed.data : null
            return { id: row.id, type: row.type, created_at: row.createdAt, data }
          })
          return { events, count: events.length }
        }),

      ingestion: (user, slug) =>
        Effect.gen(function*() {
          const brand = yield* brands.row(user.accountId, slug)
          // This process's latest deliveries first (another process writes its own within a second).
          yield* alerts.flushHealth
          const at = yield* now
          const rows = yield* repo.health(user.accountId, brand.id, new Date(at.getTime() - 24 * 3_600_000))
          const me = yield* accounts.me(user).pipe(Effect.catchTag("Unauthorized", () => Effect.fail(notFound("account not found"))))
          // The spool holds deliveries stored later (a database outage): this account's, read from its files.
          const names = (yield* spool.pending).slice(0, SPOOL_SCAN_LIMIT)
          let pending = 0
          for (const name of names) {
            const delivery = yield* spool.read(name)
            if (delivery !== null && delivery.accountId === user.accountId) pending++
          }
          return {
            channels: rows.map((r) => ({
              channel: r.channel,
              format: r.format,
              last_received_at: r.lastReceivedAt,
              deliveries_24h: r.deliveries,
              records_24h: r.records,
              accepted_24h: r.accepted,
              skipped_24h: r.skipped,
              unparseable_24h: r.unparseable,
              signature_failures_24h: r.signatureFailures
            })),
            spool_pending: pending,
            monthly_used: me.usage.monthlyEvents,
            monthly_cap: me.plan.monthlyEvents
          }
        })
    }
  })
).pipe(Layer.provide([AccountsLive, BrandsLive, AlertsLive, SpoolLive]))
