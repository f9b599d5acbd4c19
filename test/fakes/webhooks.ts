import { Effect, Layer, Option } from "effect"
import {
  type ChannelHealthRow,
  type DeliveryRow,
  type EndpointRow,
  type EventRow,
  type NewEvent,
  WebhooksRepo
} from "../../src/webhooks/Repo.js"

/**
 * An in-memory WebhooksRepo for the fake back end: endpoints, events once per dedup key, the
 * outbox, attempts, bots seen and ingestion health. Brand slugs come from the Brands service, as
 * they do for the SQL repository.
 */
export const makeFakeWebhooksRepo = () => {
  type Mutable<T> = { -readonly [K in keyof T]: T[K] }
  const endpoints: Array<Mutable<EndpointRow> & { secret: string; previousSecret: string | null; previousSecretUntil: Date | null }> = []
  const events: Array<EventRow & { accountId: number; dedupKey: string }> = []
  const deliveries: Array<Omit<DeliveryRow, "type" | "log"> & { accountId: number; endpointId: string; claimedUntil: Date | null }> = []
  const attempts: Array<{ deliveryId: string; attempt: number; at: Date; responseStatus: number | null; error: string | null; durationMs: number }> = []
  const seen = new Set<string>()
  const health: Array<ChannelHealthRow & { accountId: number; brandId: number; hour: number }> = []

  const addEvent = (event: NewEvent, to: ReadonlyArray<string> | null) => {
    if (events.some((e) => e.accountId === event.accountId && e.dedupKey === event.dedupKey)) return 0
    events.push({ id: event.id, accountId: event.accountId, dedupKey: event.dedupKey, type: event.type, body: event.body, createdAt: event.createdAt })
    const targets = to ?? endpoints.filter((e) => e.accountId === event.accountId && e.enabled && e.events.includes(event.type)).map((e) => e.id)
    for (const endpointId of targets) {
      deliveries.push({
        id: crypto.randomUUID(), accountId: event.accountId, endpointId, eventId: event.id, status: "pending", attempts: 0,
        responseStatus: null, lastError: null, createdAt: event.createdAt, nextAttemptAt: event.createdAt, deliveredAt: null, claimedUntil: null
      })
    }
    return 1
  }
  const publicRow = (e: (typeof endpoints)[number]): EndpointRow => ({
    id: e.id, accountId: e.accountId, url: e.url, events: e.events, description: e.description, enabled: e.enabled,
    disabledReason: e.disabledReason, failingSince: e.failingSince, createdAt: e.createdAt
  })
  const find = (accountId: number, id: string) => endpoints.find((e) => e.accountId === accountId && e.id === id)

  return Layer.succeed(WebhooksRepo, {
    createEndpoint: (input) =>
      Effect.sync(() => {
        const row = { ...input, enabled: true, disabledReason: null, failingSince: null, previousSecret: null, previousSecretUntil: null }
        endpoints.push(row)
        return publicRow(row)
      }),
    listEndpoints: (accountId) => Effect.sync(() => endpoints.filter((e) => e.accountId === accountId).map(publicRow)),
    countEndpoints: (accountId) => Effect.sync(() => endpoints.filter((e) => e.accountId === accountId).length),
    nthNewestEvent: (accountId, type, since, nth) =>
      Effect.sync(() => {
        const times = events.filter((e) => e.accountId === accountId && e.type === type && e.createdAt > since)
          .map((e) => e.createdAt).sort((a, b) => b.getTime() - a.getTime())
        return times[Math.max(0, nth - 1)] ?? null
      }),
    findEndpoint: (accountId, id) => Effect.sync(() => Option.map(Option.fromNullable(find(accountId, id)), publicRow)),
    updateEndpoint: (accountId, id, patch) =>
      Effect.sync(() => {
        const row = find(accountId, id)
        if (row === undefined) return Option.none()
        if (patch.url !== undefined) row.url = patch.url
        if (patch.events !== undefined) row.events = patch.events
        if (patch.description !== undefined) row.description = patch.description
        if (patch.enabled !== undefined) row.enabled = patch.enabled
        if (patch.enabled === true) Object.assign(row, { disabledReason: null, failingSince: null })
        return Option.some(publicRow(row))
      }),
    deleteEndpoint: (accountId, id) =>
      Effect.sync(() => {
        const i = endpoints.findIndex((e) => e.accountId === accountId && e.id === id)
        if (i < 0) return false
        endpoints.splice(i, 1)
        return true
      }),
    rotateSecret: (accountId, id, secret, previousUntil) =>
      Effect.sync(() => {
        const row = find(accountId, id)
        if (row === undefined) return false
        Object.assign(row, { previousSecret: row.secret, previousSecretUntil: previousUntil, secret })
        return true
      }),
    emit: (list) => Effect.sync(() => list.reduce((n, event) => n + addEvent(event, null), 0)),
    emitTo: (endpointId, event) => Effect.sync(() => void addEvent(event, [endpointId])),
    recordBots: (_accountId, brandId, candidates, toEvent) =>
      Effect.sync(() => {
        let stored = 0
        for (const c of candidates) {
          if (seen.has(`${brandId}|${c.bot}`)) continue
          seen.add(`${brandId}|${c.bot}`)
          stored += addEvent(toEvent(c), null)
        }
        return stored
      }),
    listEvents: (accountId, limit) =>
      Effect.sync(() => events.filter((e) => e.accountId === accountId).reverse().slice(0, limit)),
    listDeliveries: (accountId, endpointId, limit) =>
      Effect.sync(() =>
        deliveries.filter((d) => d.accountId === accountId && d.endpointId === endpointId).reverse().slice(0, limit).map((d) => ({
          ...d,
          type: events.find((e) => e.id === d.eventId)?.type ?? "",
          log: attempts.filter((a) => a.deliveryId === d.id)
        }))),
    retryDelivery: (accountId, endpointId, deliveryId, at) =>
      Effect.sync(() => {
        const d = deliveries.find((x) => x.accountId === accountId && x.endpointId === endpointId && x.id === deliveryId)
        if (d === undefined) return false
        Object.assign(d, { status: "pending", nextAttemptAt: at, claimedUntil: d.claimedUntil !== null && d.claimedUntil >= at ? d.claimedUntil : null })
        return true
      }),
    claimDue: (at, leaseUntil, limit, perAccount) =>
      Effect.sync(() => {
        // As the SQL: each account's due rows ranked oldest first, taken rank by rank, an account's
        // leased rows counting against its share.
        const leased = new Map<number, number>()
        for (const d of deliveries) {
          if (d.status === "pending" && d.claimedUntil !== null && d.claimedUntil >= at) leased.set(d.accountId, (leased.get(d.accountId) ?? 0) + 1)
        }
        const due = deliveries.filter((d) =>
          d.status === "pending" && d.nextAttemptAt !== null && d.nextAttemptAt <= at && (d.claimedUntil === null || d.claimedUntil < at) &&
          endpoints.some((e) => e.id === d.endpointId && e.enabled)
        ).sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime())
        const rank = new Map<number, number>()
        const ranked = due.map((d) => {
          const r = (rank.get(d.accountId) ?? 0) + 1
          rank.set(d.accountId, r)
          return { d, r }
        }).filter(({ d, r }) => r <= perAccount - (leased.get(d.accountId) ?? 0))
        const picked = ranked.sort((a, b) => a.r - b.r || a.d.nextAttemptAt!.getTime() - b.d.nextAttemptAt!.getTime()).slice(0, limit).map(({ d }) => d)
        return picked.map((d) => {
          d.claimedUntil = leaseUntil
          const e = endpoints.find((x) => x.id === d.endpointId)!
          return {
            id: d.id, accountId: d.accountId, endpointId: d.endpointId, eventId: d.eventId, body: events.find((x) => x.id === d.eventId)!.body,
            attempts: d.attempts, url: e.url, secret: e.secret, previousSecret: e.previousSecret, previousSecretUntil: e.previousSecretUntil
          }
        })
      }),
    finishAttempt: (o) =>
      Effect.sync(() => {
        attempts.push({ deliveryId: o.deliveryId, attempt: o.attempt, at: o.at, responseStatus: o.responseStatus, error: o.error, durationMs: o.durationMs })
        const d = deliveries.find((x) => x.id === o.deliveryId)
        if (d !== undefined) {
          Object.assign(d, {
            attempts: o.attempt, status: o.status, responseStatus: o.responseStatus, lastError: o.error, nextAttemptAt: o.nextAttemptAt,
            claimedUntil: null, deliveredAt: o.status === "delivered" ? o.at : d.deliveredAt
          })
        }
        const e = endpoints.find((x) => x.id === o.endpointId)
        if (e === undefined) return
        if (o.status === "delivered") e.failingSince = null
        else {
          e.failingSince = e.failingSince ?? o.at
          if (e.enabled && e.failingSince <= o.disableIfFailingSince) {
            e.enabled = false
            e.disabledReason = `disabled automatically: every delivery failed for 5 days (last: ${o.error ?? `HTTP ${o.responseStatus}`})`
          }
        }
      }),
    release: (deliveryId) =>
      Effect.sync(() => {
        const d = deliveries.find((x) => x.id === deliveryId)
        if (d !== undefined) d.claimedUntil = null
      }),
    recordHealth: (h) =>
      Effect.sync(() => {
        const hour = Math.floor(h.at.getTime() / 3_600_000) * 3_600_000
        let row = health.find((r) => r.brandId === h.brandId && r.channel === h.channel && r.hour === hour)
        if (row === undefined) {
          row = { accountId: h.accountId, brandId: h.brandId, channel: h.channel, hour, format: h.format, lastReceivedAt: h.at, deliveries: 0,
            records: 0, accepted: 0, skipped: 0, unparseable: 0, signatureFailures: 0 }
          health.push(row)
        }
        Object.assign(row, {
          format: h.format, deliveries: row.deliveries + h.deliveries, records: row.records + h.records, accepted: row.accepted + h.accepted,
          skipped: row.skipped + h.skipped, unparseable: row.unparseable + h.unparseable,
          signatureFailures: row.signatureFailures + h.signatureFailures,
          lastReceivedAt: row.lastReceivedAt > h.at ? row.lastReceivedAt : h.at
        })
      }),
    health: (accountId, brandId, since) =>
      Effect.sync(() => {
        const channels = [...new Set(health.filter((r) => r.accountId === accountId && r.brandId === brandId).map((r) => r.channel))].sort()
        return channels.map((channel) => {
          const rows = health.filter((r) => r.brandId === brandId && r.channel === channel)
          const recent = rows.filter((r) => r.hour >= since.getTime())
          const sum = (f: (r: (typeof rows)[number]) => number) => recent.reduce((n, r) => n + f(r), 0)
          const last = rows.reduce((a, b) => (a.hour >= b.hour ? a : b))
          return {
            channel, format: last.format, lastReceivedAt: rows.reduce((a, b) => (a.lastReceivedAt > b.lastReceivedAt ? a : b)).lastReceivedAt,
            deliveries: sum((r) => r.deliveries), records: sum((r) => r.records), accepted: sum((r) => r.accepted), skipped: sum((r) => r.skipped),
            unparseable: sum((r) => r.unparseable), signatureFailures: sum((r) => r.signatureFailures)
          }
        })
      }),
    stalledChannels: (activeSince, quietSince) =>
      Effect.sync(() => {
        const keys = [...new Set(health.map((r) => `${r.brandId}|${r.channel}`))]
        return keys.flatMap((key) => {
          const rows = health.filter((r) => `${r.brandId}|${r.channel}` === key)
          const last = rows.reduce((a, b) => (a.lastReceivedAt > b.lastReceivedAt ? a : b))
          if (last.lastReceivedAt < activeSince || last.lastReceivedAt >= quietSince) return []
          return [{ accountId: last.accountId, brandId: last.brandId, channel: last.channel, lastReceivedAt: last.lastReceivedAt }]
        })
      }),
    pruneHealth: (before) =>
      Effect.sync(() => {
        for (let i = health.length - 1; i >= 0; i--) if (health[i]!.hour < before.getTime()) health.splice(i, 1)
      }),
    activeBrands: (activeSince) =>
      Effect.sync(() => {
        const since = Math.floor(activeSince.getTime() / 3_600_000) * 3_600_000
        const active = new Map(health.filter((r) => r.hour >= since).map((r) => [r.brandId, { accountId: r.accountId, brandId: r.brandId }]))
        return [...active.values()]
      }),
    pruneEvents: (before) =>
      Effect.sync(() => {
        for (let i = events.length - 1; i >= 0; i--) {
          const event = events[i]!
          if (event.createdAt >= before || deliveries.some((d) => d.eventId === event.id && d.status === "pending")) continue
          events.splice(i, 1)
          for (let j = deliveries.length - 1; j >= 0; j--) if (deliveries[j]!.eventId === event.id) deliveries.splice(j, 1)
        }
      })
  })
}
