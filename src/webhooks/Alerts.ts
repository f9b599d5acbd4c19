import { Context, Duration, Effect, Layer, Option, Queue } from "effect"
import { Brands, type SiteBrand, BrandsLive } from "../brands/Brands.js"
import { IngestionReports, type IngestionReportsShape, type StoredHit } from "../ingestion/Reports.js"
import { newcombe, roundInterval } from "../platform/Statistics.js"
import { addDays, isoDay } from "../platform/Days.js"
import { now } from "../platform/Time.js"
import { Visibility, VisibilityLive } from "../visibility/Visibility.js"
import { type HealthDelivery, type NewBotCandidate, type NewEvent, WebhooksRepo } from "./Repo.js"
import { newEventId } from "./Signing.js"

/**
 * What a customer must know, computed where the facts happen (docs/webhooks.md, "Events"): the
 * ingestion path reports stored hits and each delivery, the observations path each scan or import.
 * Each event is stored once per account whatever the number of server processes (its dedup key,
 * unique per account, names the fact), together with its deliveries (the outbox). An alert never
 * fails the request that caused it: a failure is logged.
 */

export { EVENT_TYPES, type EventType } from "./EventTypes.js"
import type { EventType } from "./EventTypes.js"

/** The reports of ingestion (src/ingestion/Reports.ts) and those of observations, as events and health rows. */
export interface AlertsShape extends IngestionReportsShape {
  /** Writes the sums not written yet. */
  readonly flushHealth: Effect.Effect<void>
  /** After a scan or an import stored observations: visibility.changed, citation.gained, citation.lost. */
  readonly observationsStored: (input: { readonly accountId: number; readonly brandId: number; readonly slug: string }) => Effect.Effect<void>
  /** Stores events (once per dedup key) and wakes this process's sender. */
  readonly emit: (events: ReadonlyArray<NewEvent>) => Effect.Effect<number>
  /** Taken by the sender: a signal that deliveries were just written. */
  readonly wakeups: Queue.Dequeue<void>
  readonly wake: Effect.Effect<void>
}

export class Alerts extends Context.Tag("Alerts")<Alerts, AlertsShape>() {}

/** The body as signed and sent: `{"type", "timestamp", "data"}`. */
export const eventBody = (type: EventType, at: Date, data: Record<string, unknown>): string =>
  JSON.stringify({ type, timestamp: at.toISOString(), data })

export const makeEvent = (
  accountId: number,
  type: EventType,
  dedupKey: string,
  at: Date,
  data: Record<string, unknown>
): NewEvent => ({ id: newEventId(), accountId, type, dedupKey: `${type}:${dedupKey}`, body: eventBody(type, at, data), createdAt: at })

const round4 = (value: number) => Math.round(value * 10_000) / 10_000

/** A bounded set of facts this process already knows were handled: it only saves queries. */
const knownSet = (max: number) => {
  const set = new Set<string>()
  return {
    has: (key: string) => set.has(key),
    add: (key: string) => {
      if (set.size >= max) set.clear()
      set.add(key)
    }
  }
}

/** Ingestion health sums are written this often; at most this many rows wait (then they are written at once). */
const HEALTH_FLUSH = Duration.seconds(1)
const HEALTH_MAX_PENDING = 10_000

/** Alerts, and the same service as the IngestionReports that ingestion sends its facts to. */
export const AlertsLive = Layer.scopedContext(
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const visibility = yield* Visibility
    const brands = yield* Brands
    const wakeups = yield* Queue.sliding<void>(1)
    const wake = Queue.offer(wakeups, undefined).pipe(Effect.asVoid)
    const botsSeen = knownSet(100_000)
    const quotaSent = knownSet(100_000)

    const emit: AlertsShape["emit"] = (events) =>
      Effect.tap(repo.emit(events), (stored) => (stored > 0 ? wake : Effect.void))

    /** Alerts never fail their caller: an outage or a bug is logged. */
    const safely = (what: string) => <R>(effect: Effect.Effect<void, never, R>) =>
      Effect.catchAllCause(effect, (cause) => Effect.logWarning(`alerts: ${what} failed`, cause))

    const newBots = (brandId: number, accountId: number, hits: ReadonlyArray<StoredHit>) =>
      Effect.gen(function*() {
        // Each hit's earliest by bot first, then the seen check once per bot (not a key string per hit).
        const first = new Map<string, StoredHit>()
        for (const hit of hits) {
          const known = first.get(hit.bot)
          if (known === undefined || hit.ts < known.ts) first.set(hit.bot, hit)
        }
        for (const bot of first.keys()) if (botsSeen.has(`${brandId}|${bot}`)) first.delete(bot)
        if (first.size === 0) return
        const candidates: Array<NewBotCandidate> = [...first.values()].map((hit) => ({
          bot: hit.bot,
          vendor: hit.vendor,
          kind: hit.kind,
          firstSeen: new Date(hit.ts),
          path: hit.path
        }))
        const at = yield* now
        const slug = (yield* brands.slugs([{ accountId, brandId }])).get(brandId) ?? ""
        const stored = yield* repo.recordBots(accountId, brandId, candidates, (c) =>
          makeEvent(accountId, "crawler.new_bot", `${brandId}:${c.bot}`, at, {
            brand_slug: slug,
            bot: c.bot,
            vendor: c.vendor,
            kind: c.kind,
            first_seen: c.firstSeen.toISOString(),
            path: c.path
          }))
        for (const bot of first.keys()) botsSeen.add(`${brandId}|${bot}`)
        if (stored > 0) yield* wake
      })

    const quota = (accountId: number, month: string, used: number, cap: number) =>
      Effect.gen(function*() {
        if (cap <= 0) return
        const at = yield* now
        const events: Array<NewEvent> = []
        const keys: Array<string> = []
        for (const threshold of [0.8, 1] as const) {
          const key = `${accountId}|${month}|${threshold}`
          if (used < threshold * cap || quotaSent.has(key)) continue
          events.push(makeEvent(accountId, "ingestion.quota", `${month}:${threshold}`, at, {
            monthly_used: used,
            monthly_cap: cap,
            threshold
          }))
          keys.push(key)
        }
        yield* emit(events)
        for (const key of keys) quotaSent.add(key)
      })

    const hitsStored: AlertsShape["hitsStored"] = (input) =>
      Effect.gen(function*() {
        if (input.stored > 0) yield* newBots(input.brandId, input.accountId, input.hits)
        yield* quota(input.accountId, input.month, input.used, input.cap)
      }).pipe(safely("crawler hits"))

    /** Deliveries summed per site id (the brand is resolved when they are written). */
    let pendingHealth = new Map<string, Omit<HealthDelivery, "brandId"> & { readonly siteId: string }>()

    /**
     * Each site id is resolved once per flush through the Brands service; a site id that is no brand,
     * or another account's, has no health row.
     */
    const flushHealth: AlertsShape["flushHealth"] = Effect.suspend(() => {
      const pending = [...pendingHealth.values()]
      pendingHealth = new Map()
      const sites = new Map<string, Option.Option<SiteBrand>>()
      return Effect.forEach(pending, ({ siteId, ...sums }) =>
        Effect.gen(function*() {
          let brand = sites.get(siteId)
          if (brand === undefined) {
            brand = yield* brands.findSite(siteId)
            sites.set(siteId, brand)
          }
          if (Option.isNone(brand) || brand.value.accountId !== sums.accountId) return
          yield* repo.recordHealth({ ...sums, brandId: brand.value.id })
        }), { discard: true })
    }).pipe(safely("ingestion health"))

    const delivery: AlertsShape["delivery"] = (input) =>
      Effect.flatMap(now, (at) => {
        const hour = Math.floor(at.getTime() / 3_600_000)
        const key = `${input.accountId}|${input.siteId}|${input.channel}|${hour}`
        const skipped = Math.max(0, input.records - input.accepted - input.unparseable)
        const known = pendingHealth.get(key)
        pendingHealth.set(key, {
          accountId: input.accountId,
          siteId: input.siteId,
          channel: input.channel,
          format: input.format,
          at: known !== undefined && known.at > at ? known.at : at,
          deliveries: (known?.deliveries ?? 0) + 1,
          records: (known?.records ?? 0) + input.records,
          accepted: (known?.accepted ?? 0) + input.accepted,
          unparseable: (known?.unparseable ?? 0) + input.unparseable,
          skipped: (known?.skipped ?? 0) + skipped,
          signatureFailures: (known?.signatureFailures ?? 0) + (input.signatureFailure ? 1 : 0)
        })
        return pendingHealth.size >= HEALTH_MAX_PENDING ? flushHealth : Effect.void
      })

    // Written once a second, and what is left when the services stop.
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(HEALTH_FLUSH), flushHealth)))
    yield* Effect.addFinalizer(() => flushHealth)

    const observationsStored: AlertsShape["observationsStored"] = ({ accountId, brandId, slug }) =>
      Effect.gen(function*() {
        const at = yield* now
        const today = isoDay(at)
        const events: Array<NewEvent> = []
        // The last 7 days (today included) against the 7 before (docs/visibility.md: Newcombe).
        const rates = yield* visibility.mentionCounts(accountId, brandId, {
          previousFrom: addDays(today, -13),
          currentFrom: addDays(today, -6),
          until: today
        })
        for (const r of rates) {
          const difference = newcombe(r.currentK, r.currentN, r.previousK, r.previousN)
          if (!difference.significant || difference.delta === null) continue
          events.push(makeEvent(accountId, "visibility.changed", `${brandId}:${r.engine ?? "*"}:${today}`, at, {
            brand_slug: slug,
            engine: r.engine,
            previous: round4(r.previousK / r.previousN),
            current: round4(r.currentK / r.currentN),
            delta: round4(difference.delta),
            delta_ci95: roundInterval(difference.interval)
          }))
        }
        // Cited in the last 7 days and not in the 28 before, or the reverse.
        const changes = yield* visibility.citationChanges(accountId, brandId, {
          previousFrom: addDays(today, -34),
          currentFrom: addDays(today, -6),
          until: today
        })
        for (const c of changes) {
          events.push(makeEvent(accountId, `citation.${c.change}`, `${brandId}:${c.domain}:${c.engine}:${c.day}`, at, {
            brand_slug: slug,
            domain: c.domain,
            engine: c.engine
          }))
        }
        yield* emit(events)
      }).pipe(safely("observations"))

    const alerts: AlertsShape = { hitsStored, delivery, flushHealth, observationsStored, emit, wakeups, wake }
    return Context.make(Alerts, alerts).pipe(Context.add(IngestionReports, alerts))
  })
).pipe(Layer.provide([BrandsLive, VisibilityLive]))
