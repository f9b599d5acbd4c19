import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"

/**
 * Webhook endpoints, events, the delivery outbox and its attempts, the bots each brand has seen,
 * and ingestion health (migrations/0013_webhooks.sql). Every read and write of an account's rows
 * is filtered by its account id; the sender's claim is the one query across accounts.
 */

export interface EndpointRow {
  readonly id: string
  readonly accountId: number
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly description: string
  readonly enabled: boolean
  readonly disabledReason: string | null
  readonly failingSince: Date | null
  readonly createdAt: Date
}

export interface NewEvent {
  readonly id: string
  readonly accountId: number
  readonly type: string
  /** Names the fact: an event with a key already stored for the account is not stored again. */
  readonly dedupKey: string
  readonly body: string
  readonly createdAt: Date
}

export interface EventRow {
  readonly id: string
  readonly type: string
  readonly body: string
  readonly createdAt: Date
}

export interface AttemptRow {
  readonly attempt: number
  readonly at: Date
  readonly responseStatus: number | null
  readonly error: string | null
  readonly durationMs: number
}

export interface DeliveryRow {
  readonly id: string
  readonly eventId: string
  readonly type: string
  readonly status: string
  readonly attempts: number
  readonly responseStatus: number | null
  readonly lastError: string | null
  readonly createdAt: Date
  readonly nextAttemptAt: Date | null
  readonly deliveredAt: Date | null
  readonly log: ReadonlyArray<AttemptRow>
}

/** A delivery claimed for one attempt, with what signing and sending it takes. */
export interface ClaimedDelivery {
  readonly id: string
  readonly accountId: number
  readonly endpointId: string
  readonly eventId: string
  readonly body: string
  /** Attempts made before this one. */
  readonly attempts: number
  readonly url: string
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretUntil: Date | null
}

export interface AttemptOutcome {
  readonly deliveryId: string
  readonly endpointId: string
  readonly attempt: number
  readonly at: Date
  readonly responseStatus: number | null
  readonly error: string | null
  readonly durationMs: number
  /** delivered; retry at `nextAttemptAt`; or failed for good. */
  readonly status: "delivered" | "pending" | "failed"
  readonly nextAttemptAt: Date | null
  /** Disable the endpoint when its failures started at or before this time. */
  readonly disableIfFailingSince: Date
}

export interface HealthDelivery {
  readonly accountId: number
  readonly siteId: string
  readonly channel: string
  readonly format: string
  /** The latest delivery's time (the hour row is the one of this time). */
  readonly at: Date
  /** Deliveries summed in this row. */
  readonly deliveries: number
  readonly records: number
  readonly accepted: number
  readonly skipped: number
  readonly unparseable: number
  readonly signatureFailures: number
}

export interface ChannelHealthRow {
  readonly channel: string
  readonly format: string
  readonly lastReceivedAt: Date
  readonly deliveries: number
  readonly records: number
  readonly accepted: number
  readonly skipped: number
  readonly unparseable: number
  readonly signatureFailures: number
}

export interface StalledChannel {
  readonly accountId: number
  readonly brandId: number
  readonly slug: string
  readonly channel: string
  readonly lastReceivedAt: Date
}

export interface SpoofedSurge {
  readonly accountId: number
  readonly brandId: number
  readonly slug: string
  readonly bot: string
  readonly spoofed: number
}

export interface NewBotCandidate {
  readonly bot: string
  readonly vendor: string
  readonly kind: string
  readonly firstSeen: Date
  readonly path: string
}

export interface WebhooksRepoShape {
  readonly createEndpoint: (input: {
    readonly id: string
    readonly accountId: number
    readonly url: string
    readonly events: ReadonlyArray<string>
    readonly description: string
    readonly secret: string
    readonly createdAt: Date
  }) => Effect.Effect<EndpointRow>
  readonly listEndpoints: (accountId: number) => Effect.Effect<ReadonlyArray<EndpointRow>>
  readonly findEndpoint: (accountId: number, id: string) => Effect.Effect<Option.Option<EndpointRow>>
  readonly updateEndpoint: (
    accountId: number,
    id: string,
    patch: {
      readonly url?: string | undefined
      readonly events?: ReadonlyArray<string> | undefined
      readonly description?: string | undefined
      readonly enabled?: boolean | undefined
    }
  ) => Effect.Effect<Option.Option<EndpointRow>>
  readonly deleteEndpoint: (accountId: number, id: string) => Effect.Effect<boolean>
  readonly rotateSecret: (accountId: number, id: string, secret: string, previousUntil: Date) => Effect.Effect<boolean>
  /** Stores the events not stored yet and their deliveries to the account's enabled endpoints subscribed to their type. */
  readonly emit: (events: ReadonlyArray<NewEvent>) => Effect.Effect<number>
  /** A ping: the event and one delivery to that endpoint, whatever it subscribes to. */
  readonly emitTo: (endpointId: string, event: NewEvent) => Effect.Effect<void>
  /**
   * Marks the bots as seen for the brand; for those seen for the first time, stores the events
   * `toEvent` makes, in the same transaction.
   */
  readonly recordBots: (
    brandId: number,
    candidates: ReadonlyArray<NewBotCandidate>,
    toEvent: (bot: NewBotCandidate, brandSlug: string) => NewEvent
  ) => Effect.Effect<number>
  readonly listEvents: (accountId: number, limit: number) => Effect.Effect<ReadonlyArray<EventRow>>
  readonly listDeliveries: (accountId: number, endpointId: string, limit: number) => Effect.Effect<ReadonlyArray<DeliveryRow>>
  readonly retryDelivery: (accountId: number, endpointId: string, deliveryId: string, at: Date) => Effect.Effect<boolean>
  /** Due deliveries of enabled endpoints, each leased to this caller until `leaseUntil`. */
  readonly claimDue: (at: Date, leaseUntil: Date, limit: number) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  readonly finishAttempt: (outcome: AttemptOutcome) => Effect.Effect<void>
  /** Gives a claimed delivery back at once (its attempt was cut short by a shutdown). */
  readonly release: (deliveryId: string) => Effect.Effect<void>
  readonly recordHealth: (delivery: HealthDelivery) => Effect.Effect<void>
  readonly health: (accountId: number, brandId: number, since: Date) => Effect.Effect<ReadonlyArray<ChannelHealthRow>>
  /** Channels with a delivery since `activeSince` and none since `quietSince`. */
  readonly stalledChannels: (activeSince: Date, quietSince: Date) => Effect.Effect<ReadonlyArray<StalledChannel>>
  readonly pruneHealth: (before: Date) => Effect.Effect<void>
  /** Deletes events (with their deliveries and attempts) created before `before` that have nothing pending. */
  readonly pruneEvents: (before: Date) => Effect.Effect<void>
  /**
   * Bots with at least `min` hits judged spoofed since `since`, per brand, among the brands that
   * received deliveries since `activeSince`.
   */
  readonly spoofedSurges: (since: Date, activeSince: Date, min: number) => Effect.Effect<ReadonlyArray<SpoofedSurge>>
}

export class WebhooksRepo extends Context.Tag("WebhooksRepo")<WebhooksRepo, WebhooksRepoShape>() {}

const endpointColumns = `id::text as id, account_id::int as "accountId", url, events, description, enabled,
  disabled_reason as "disabledReason", failing_since as "failingSince", created_at as "createdAt"`

export const WebhooksRepoLive = Layer.effect(
  WebhooksRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(endpointColumns)

    const findEndpoint: WebhooksRepoShape["findEndpoint"] = (accountId, id) =>
      sql<EndpointRow>`select ${cols} from webhook_endpoints where account_id = ${accountId} and id = ${id}::uuid`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    const insertEvents = (events: ReadonlyArray<NewEvent>) =>
      Effect.forEach(events, (event) =>
        sql<{ id: string }>`
          with ev as (
            insert into webhook_events (id, account_id, type, dedup_key, body, created_at)
            values (${event.id}, ${event.accountId}, ${event.type}, ${event.dedupKey}, ${event.body}, ${event.createdAt})
            on conflict (account_id, dedup_key) do nothing
            returning id, account_id, type, created_at
          ), out as (
            insert into webhook_deliveries (id, account_id, endpoint_id, event_id, status, attempts, created_at, next_attempt_at)
            select gen_random_uuid(), ev.account_id, e.id, ev.id, 'pending', 0, ev.created_at, ev.created_at
            from ev join webhook_endpoints e on e.account_id = ev.account_id and e.enabled and ev.type = any(e.events)
          )
          select id from ev`.pipe(Effect.map((rows) => rows.length)))
        .pipe(Effect.map((counts) => counts.reduce((a, b) => a + b, 0)))

    return {
      createEndpoint: (input) =>
        sql<EndpointRow>`
          insert into webhook_endpoints (id, account_id, url, events, description, secret, created_at)
          values (${input.id}::uuid, ${input.accountId}, ${input.url}, ${input.events}::text[], ${input.description},
                  ${input.secret}, ${input.createdAt})
          returning ${cols}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie),

      listEndpoints: (accountId) =>
        sql<EndpointRow>`select ${cols} from webhook_endpoints where account_id = ${accountId} order by created_at, id`.pipe(Effect.orDie),

      findEndpoint,

      updateEndpoint: (accountId, id, patch) =>
        sql<EndpointRow>`
          update webhook_endpoints set
            url = coalesce(${patch.url ?? null}, url),
            events = coalesce(${patch.events === undefined ? null : patch.events}::text[], events),
            description = coalesce(${patch.description ?? null}, description),
            enabled = coalesce(${patch.enabled ?? null}::boolean, enabled),
            -- Enabling again starts afresh: no reason, no run of failures.
            disabled_reason = case when ${patch.enabled ?? null}::boolean is true then null else disabled_reason end,
            failing_since = case when ${patch.enabled ?? null}::boolean is true then null else failing_since end
          where account_id = ${accountId} and id = ${id}::uuid
          returning ${cols}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie),

      deleteEndpoint: (accountId, id) =>
        sql`delete from webhook_endpoints where account_id = ${accountId} and id = ${id}::uuid returning id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),

      rotateSecret: (accountId, id, secret, previousUntil) =>
        sql`
          update webhook_endpoints set previous_secret = secret, previous_secret_until = ${previousUntil}, secret = ${secret}
          where account_id = ${accountId} and id = ${id}::uuid returning id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),

      emit: (events) => (events.length === 0 ? Effect.succeed(0) : insertEvents(events).pipe(sql.withTransaction, Effect.orDie)),

      emitTo: (endpointId, event) =>
        sql`
          with ev as (
            insert into webhook_events (id, account_id, type, dedup_key, body, created_at)
            values (${event.id}, ${event.accountId}, ${event.type}, ${event.dedupKey}, ${event.body}, ${event.createdAt})
            returning id, account_id, created_at
          )
          insert into webhook_deliveries (id, account_id, endpoint_id, event_id, status, attempts, created_at, next_attempt_at)
          select gen_random_uuid(), ev.account_id, ${endpointId}::uuid, ev.id, 'pending', 0, ev.created_at, ev.created_at from ev`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),

      recordBots: (brandId, candidates, toEvent) =>
        Effect.gen(function*() {
          const fresh = yield* sql<{ bot: string }>`
            insert into brand_bots_seen (account_id, brand_id, bot, first_seen)
            select (select account_id from brands where id = ${brandId}), ${brandId}, bot, first_seen from unnest(${candidates.map((c) => c.bot)}::text[],
              ${candidates.map((c) => c.firstSeen.toISOString())}::timestamptz[]) as u(bot, first_seen)
            on conflict (account_id, brand_id, bot) do nothing
            returning bot`
          if (fresh.length === 0) return 0
          const bots = new Set(fresh.map((row) => row.bot))
          const brand = yield* sql<{ slug: string }>`select slug from brands where id = ${brandId}`
          const slug = brand[0]?.slug ?? ""
          return yield* insertEvents(candidates.filter((c) => bots.has(c.bot)).map((c) => toEvent(c, slug)))
        }).pipe(sql.withTransaction, Effect.orDie),

      listEvents: (accountId, limit) =>
        sql<EventRow>`
          select id, type, body, created_at as "createdAt" from webhook_events
          where account_id = ${accountId} order by created_at desc, id limit ${limit}`.pipe(Effect.orDie),

      listDeliveries: (accountId, endpointId, limit) =>
        Effect.gen(function*() {
          const rows = yield* sql<Omit<DeliveryRow, "log">>`
            select d.id::text as id, d.event_id as "eventId", e.type, d.status, d.attempts, d.response_status as "responseStatus",
                   d.last_error as "lastError", d.created_at as "createdAt", d.next_attempt_at as "nextAttemptAt",
                   d.delivered_at as "deliveredAt"
            from webhook_deliveries d join webhook_events e on e.id = d.event_id
            where d.account_id = ${accountId} and d.endpoint_id = ${endpointId}::uuid
            order by d.created_at desc, d.id limit ${limit}`
          if (rows.length === 0) return []
          const attempts = yield* sql<AttemptRow & { deliveryId: string }>`
            select delivery_id::text as "deliveryId", attempt, at, response_status as "responseStatus", error, duration_ms as "durationMs"
            from webhook_attempts where delivery_id = any(${rows.map((row) => row.id)}::uuid[]) order by attempt`
          return rows.map((row) => ({
            ...row,
            log: attempts.filter((a) => a.deliveryId === row.id).map(({ deliveryId: _, ...attempt }) => attempt)
          }))
        }).pipe(Effect.orDie),

      retryDelivery: (accountId, endpointId, deliveryId, at) =>
        sql`
          update webhook_deliveries set status = 'pending', next_attempt_at = ${at}, claimed_until = null
          where account_id = ${accountId} and endpoint_id = ${endpointId}::uuid and id = ${deliveryId}::uuid
          returning id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),

      claimDue: (at, leaseUntil, limit) =>
        // SKIP LOCKED: two processes claiming at once take different rows; the lease keeps a row
        // from being claimed again while its attempt runs, and frees it if the sender dies.
        sql<ClaimedDelivery>`
          with due as (
            select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id and e.enabled
            where d.status = 'pending' and d.next_attempt_at <= ${at} and (d.claimed_until is null or d.claimed_until < ${at})
            order by d.next_attempt_at
            limit ${limit}
            for update of d skip locked
          )
          update webhook_deliveries d set claimed_until = ${leaseUntil}
          from due, webhook_events ev, webhook_endpoints e
          where d.id = due.id and ev.id = d.event_id and e.id = d.endpoint_id
          returning d.id::text as id, d.account_id::int as "accountId", d.endpoint_id::text as "endpointId", d.event_id as "eventId",
                    ev.body, d.attempts, e.url, e.secret, e.previous_secret as "previousSecret",
                    e.previous_secret_until as "previousSecretUntil"`.pipe(sql.withTransaction, Effect.orDie),

      finishAttempt: (o) =>
        Effect.gen(function*() {
          yield* sql`
            insert into webhook_attempts (account_id, delivery_id, attempt, at, response_status, error, duration_ms)
            select account_id, id, ${o.attempt}, ${o.at}, ${o.responseStatus}, ${o.error}, ${o.durationMs} from webhook_deliveries where id = ${o.deliveryId}::uuid
            on conflict (account_id, delivery_id, attempt) do nothing`
          yield* sql`
            update webhook_deliveries set attempts = ${o.attempt}, status = ${o.status}, response_status = ${o.responseStatus},
              last_error = ${o.error}, next_attempt_at = ${o.nextAttemptAt}, claimed_until = null,
              delivered_at = case when ${o.status} = 'delivered' then ${o.at}::timestamptz else delivered_at end
            where id = ${o.deliveryId}::uuid`
          if (o.status === "delivered") {
            yield* sql`update webhook_endpoints set failing_since = null where id = ${o.endpointId}::uuid and failing_since is not null`
          } else {
            const reason = `disabled automatically: every delivery failed for 5 days (last: ${o.error ?? `HTTP ${o.responseStatus}`})`
            yield* sql`
              update webhook_endpoints set failing_since = coalesce(failing_since, ${o.at}),
                enabled = case when coalesce(failing_since, ${o.at}) <= ${o.disableIfFailingSince} then false else enabled end,
                disabled_reason = case when enabled and coalesce(failing_since, ${o.at}) <= ${o.disableIfFailingSince}
                                       then ${reason} else disabled_reason end
              where id = ${o.endpointId}::uuid`
          }
        }).pipe(sql.withTransaction, Effect.orDie),

      release: (deliveryId) =>
        sql`update webhook_deliveries set claimed_until = null where id = ${deliveryId}::uuid`.pipe(Effect.asVoid, Effect.orDie),

      recordHealth: (h) =>
        sql`
          insert into ingestion_health (account_id, brand_id, channel, hour, format, deliveries, records, accepted, skipped,
                                        unparseable, signature_failures, last_received_at)
          select b.account_id, b.id, ${h.channel}, date_trunc('hour', ${h.at}::timestamptz), ${h.format}, ${h.deliveries}, ${h.records},
                 ${h.accepted}, ${h.skipped}, ${h.unparseable}, ${h.signatureFailures}, ${h.at}
          from brands b where b.account_id = ${h.accountId} and b.site_id::text = ${h.siteId}
          on conflict (account_id, brand_id, channel, hour) do update set
            format = excluded.format, deliveries = ingestion_health.deliveries + excluded.deliveries,
            records = ingestion_health.records + excluded.records, accepted = ingestion_health.accepted + excluded.accepted,
            skipped = ingestion_health.skipped + excluded.skipped, unparseable = ingestion_health.unparseable + excluded.unparseable,
            signature_failures = ingestion_health.signature_failures + excluded.signature_failures,
            last_received_at = greatest(ingestion_health.last_received_at, excluded.last_received_at)`.pipe(Effect.asVoid, Effect.orDie),

      health: (accountId, brandId, since) =>
        sql<ChannelHealthRow>`
          select channel, (array_agg(format order by hour desc))[1] as format, max(last_received_at) as "lastReceivedAt",
                 (coalesce(sum(deliveries) filter (where hour >= ${since}), 0))::int as deliveries,
                 (coalesce(sum(records) filter (where hour >= ${since}), 0))::int as records,
                 (coalesce(sum(accepted) filter (where hour >= ${since}), 0))::int as accepted,
                 (coalesce(sum(skipped) filter (where hour >= ${since}), 0))::int as skipped,
                 (coalesce(sum(unparseable) filter (where hour >= ${since}), 0))::int as unparseable,
                 (coalesce(sum(signature_failures) filter (where hour >= ${since}), 0))::int as "signatureFailures"
          from ingestion_health where account_id = ${accountId} and brand_id = ${brandId}
          group by channel order by channel`.pipe(Effect.orDie),

      stalledChannels: (activeSince, quietSince) =>
        sql<StalledChannel>`
          select h.account_id::int as "accountId", h.brand_id as "brandId", b.slug, h.channel, max(h.last_received_at) as "lastReceivedAt"
          from ingestion_health h join brands b on b.id = h.brand_id
          where h.hour >= date_trunc('hour', ${activeSince}::timestamptz)
          group by h.account_id, h.brand_id, b.slug, h.channel
          having max(h.last_received_at) >= ${activeSince} and max(h.last_received_at) < ${quietSince}`.pipe(Effect.orDie),

      spoofedSurges: (since, activeSince, min) =>
        sql<SpoofedSurge>`
          select b.account_id::int as "accountId", b.id as "brandId", b.slug, s.bot, s.spoofed
          from brands b cross join lateral (
            select h.bot, count(*)::int as spoofed from crawler_hits h
            where h.brand_id = b.id and h.ts >= ${since} and h.verification = 'spoofed'
            group by h.bot having count(*) >= ${min}
          ) s
          where b.id in (select brand_id from ingestion_health where hour >= date_trunc('hour', ${activeSince}::timestamptz))`.pipe(
          Effect.orDie
        ),

      pruneEvents: (before) =>
        sql`
          delete from webhook_events e where e.created_at < ${before}
            and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status = 'pending')`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),

      pruneHealth: (before) => sql`delete from ingestion_health where hour < ${before}`.pipe(Effect.asVoid, Effect.orDie)
    }
  })
)
