import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { firstRow, rows, singleRow } from "../platform/Rows.js"

/**
 * Webhook endpoints, events, the delivery outbox and its attempts, the bots each brand has seen,
 * and ingestion health (migrations/0013_webhooks.sql). Every read and write of an account's rows
 * is filtered by its account id; the sender's claim and the background checks' reads are the
 * queries across accounts. Only this domain's tables: brand slugs come from the Brands service,
 * crawler verdicts from the Ingestion service.
 */

export const EndpointRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.Number,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  description: Schema.String,
  enabled: Schema.Boolean,
  disabledReason: Schema.NullOr(Schema.String),
  failingSince: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf
})
export type EndpointRow = typeof EndpointRow.Type

export interface NewEvent {
  readonly id: string
  readonly accountId: number
  readonly type: string
  /** Names the fact: an event with a key already stored for the account is not stored again. */
  readonly dedupKey: string
  readonly body: string
  readonly createdAt: Date
}

export const EventRow = Schema.Struct({ id: Schema.String, type: Schema.String, body: Schema.String, createdAt: Schema.DateFromSelf })
export type EventRow = typeof EventRow.Type

export const AttemptRow = Schema.Struct({
  attempt: Schema.Number,
  at: Schema.DateFromSelf,
  responseStatus: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Number
})
export type AttemptRow = typeof AttemptRow.Type

/** A delivery as listed, without its attempts. */
const DeliveryHead = Schema.Struct({
  id: Schema.String,
  eventId: Schema.String,
  type: Schema.String,
  status: Schema.String,
  attempts: Schema.Number,
  responseStatus: Schema.NullOr(Schema.Number),
  lastError: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  nextAttemptAt: Schema.NullOr(Schema.DateFromSelf),
  deliveredAt: Schema.NullOr(Schema.DateFromSelf)
})
const DeliveryAttempt = Schema.Struct({ deliveryId: Schema.String, ...AttemptRow.fields })

export interface DeliveryRow extends Schema.Schema.Type<typeof DeliveryHead> {
  readonly log: ReadonlyArray<AttemptRow>
}

/** A delivery claimed for one attempt, with what signing and sending it takes. */
export const ClaimedDelivery = Schema.Struct({
  id: Schema.String,
  accountId: Schema.Number,
  endpointId: Schema.String,
  eventId: Schema.String,
  body: Schema.String,
  /** Attempts made before this one. */
  attempts: Schema.Number,
  url: Schema.String,
  secret: Schema.String,
  previousSecret: Schema.NullOr(Schema.String),
  previousSecretUntil: Schema.NullOr(Schema.DateFromSelf)
})
export type ClaimedDelivery = typeof ClaimedDelivery.Type

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

/** Deliveries of one brand's channel summed in memory, to add to the hour row of `at`. */
export interface HealthDelivery {
  readonly accountId: number
  readonly brandId: number
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

export const ChannelHealthRow = Schema.Struct({
  channel: Schema.String,
  format: Schema.String,
  lastReceivedAt: Schema.DateFromSelf,
  deliveries: Schema.Number,
  records: Schema.Number,
  accepted: Schema.Number,
  skipped: Schema.Number,
  unparseable: Schema.Number,
  signatureFailures: Schema.Number
})
export type ChannelHealthRow = typeof ChannelHealthRow.Type

/** A brand's channel that delivered and then went quiet (the brand's slug comes from the Brands service). */
export const QuietChannel = Schema.Struct({
  accountId: Schema.Number,
  brandId: Schema.Number,
  channel: Schema.String,
  lastReceivedAt: Schema.DateFromSelf
})
export type QuietChannel = typeof QuietChannel.Type

/** A brand that received ingestion deliveries. */
export const ActiveBrand = Schema.Struct({ accountId: Schema.Number, brandId: Schema.Number })
export type ActiveBrand = typeof ActiveBrand.Type

export interface NewBotCandidate {
  readonly bot: string
  readonly vendor: string
  readonly kind: string
  readonly firstSeen: Date
  readonly path: string
}

const BotRow = Schema.Struct({ bot: Schema.String })
const CountRow = Schema.Struct({ n: Schema.Number })
const AtRow = Schema.Struct({ at: Schema.DateFromSelf })

/** Serialises the claims of every process, so each counts the others' leases (any constant key: this one is "whclaim"). */
const CLAIM_LOCK = 0x7768636c

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
  readonly countEndpoints: (accountId: number) => Effect.Effect<number>
  /**
   * The time of the account's `nth` newest event of `type` created after `since`, or null when it
   * has fewer (the sliding window of the test pings' limit).
   */
  readonly nthNewestEvent: (accountId: number, type: string, since: Date, nth: number) => Effect.Effect<Date | null>
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
    accountId: number,
    brandId: number,
    candidates: ReadonlyArray<NewBotCandidate>,
    toEvent: (bot: NewBotCandidate) => NewEvent
  ) => Effect.Effect<number>
  readonly listEvents: (accountId: number, limit: number) => Effect.Effect<ReadonlyArray<EventRow>>
  readonly listDeliveries: (accountId: number, endpointId: string, limit: number) => Effect.Effect<ReadonlyArray<DeliveryRow>>
  readonly retryDelivery: (accountId: number, endpointId: string, deliveryId: string, at: Date) => Effect.Effect<boolean>
  /**
   * Up to `limit` due deliveries of enabled endpoints, each leased to this caller until
   * `leaseUntil`: round-robin across accounts (each account's oldest first, then each one's
   * second...), an account taking no more than what brings its leased deliveries, across every
   * caller, to `perAccount`.
   */
  readonly claimDue: (at: Date, leaseUntil: Date, limit: number, perAccount: number) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  readonly finishAttempt: (outcome: AttemptOutcome) => Effect.Effect<void>
  /** Gives a claimed delivery back at once (its attempt was cut short by a shutdown). */
  readonly release: (deliveryId: string) => Effect.Effect<void>
  readonly recordHealth: (delivery: HealthDelivery) => Effect.Effect<void>
  readonly health: (accountId: number, brandId: number, since: Date) => Effect.Effect<ReadonlyArray<ChannelHealthRow>>
  /** Channels with a delivery since `activeSince` and none since `quietSince`. */
  readonly stalledChannels: (activeSince: Date, quietSince: Date) => Effect.Effect<ReadonlyArray<QuietChannel>>
  readonly pruneHealth: (before: Date) => Effect.Effect<void>
  /** Deletes events (with their deliveries and attempts) created before `before` that have nothing pending. */
  readonly pruneEvents: (before: Date) => Effect.Effect<void>
  /** The brands that received deliveries in the hour of `activeSince` or after (the spoofed-surge check's candidates). */
  readonly activeBrands: (activeSince: Date) => Effect.Effect<ReadonlyArray<ActiveBrand>>
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
      sql`select ${cols} from webhook_endpoints where account_id = ${accountId} and id = ${id}::uuid`.pipe(
        firstRow(EndpointRow),
        Effect.orDie
      )

    const insertEvents = (events: ReadonlyArray<NewEvent>) =>
      Effect.forEach(events, (event) =>
        sql`
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
        sql`
          insert into webhook_endpoints (id, account_id, url, events, description, secret, created_at)
          values (${input.id}::uuid, ${input.accountId}, ${input.url}, ${input.events}::text[], ${input.description},
                  ${input.secret}, ${input.createdAt})
          returning ${cols}`.pipe(singleRow(EndpointRow), Effect.orDie),

      listEndpoints: (accountId) =>
        sql`select ${cols} from webhook_endpoints where account_id = ${accountId} order by created_at, id`.pipe(
          rows(EndpointRow),
          Effect.orDie
        ),

      countEndpoints: (accountId) =>
        sql`select count(*)::int as n from webhook_endpoints where account_id = ${accountId}`.pipe(
          singleRow(CountRow),
          Effect.map((row) => row.n),
          Effect.orDie
        ),

      nthNewestEvent: (accountId, type, since, nth) =>
        sql`
          select created_at as at from webhook_events
          where account_id = ${accountId} and type = ${type} and created_at > ${since}
          order by created_at desc offset ${Math.max(0, nth - 1)} limit 1`.pipe(
          firstRow(AtRow),
          Effect.map(Option.match({ onNone: () => null, onSome: (row) => row.at })),
          Effect.orDie
        ),

      findEndpoint,

      updateEndpoint: (accountId, id, patch) =>
        sql`
          update webhook_endpoints set
            url = coalesce(${patch.url ?? null}, url),
            events = coalesce(${patch.events === undefined ? null : patch.events}::text[], events),
            description = coalesce(${patch.description ?? null}, description),
            enabled = coalesce(${patch.enabled ?? null}::boolean, enabled),
            -- Enabling again starts afresh: no reason, no run of failures.
            disabled_reason = case when ${patch.enabled ?? null}::boolean is true then null else disabled_reason end,
            failing_since = case when ${patch.enabled ?? null}::boolean is true then null else failing_since end
          where account_id = ${accountId} and id = ${id}::uuid
          returning ${cols}`.pipe(firstRow(EndpointRow), Effect.orDie),

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

      recordBots: (accountId, brandId, candidates, toEvent) =>
        Effect.gen(function*() {
          const fresh = yield* sql`
            insert into brand_bots_seen (account_id, brand_id, bot, first_seen)
            select ${accountId}, ${brandId}, bot, first_seen from unnest(${candidates.map((c) => c.bot)}::text[],
              ${candidates.map((c) => c.firstSeen.toISOString())}::timestamptz[]) as u(bot, first_seen)
            on conflict (account_id, brand_id, bot) do nothing
            returning bot`.pipe(rows(BotRow))
          if (fresh.length === 0) return 0
          const bots = new Set(fresh.map((row) => row.bot))
          return yield* insertEvents(candidates.filter((c) => bots.has(c.bot)).map(toEvent))
        }).pipe(sql.withTransaction, Effect.orDie),

      listEvents: (accountId, limit) =>
        sql`
          select id, type, body, created_at as "createdAt" from webhook_events
          where account_id = ${accountId} order by created_at desc, id limit ${limit}`.pipe(rows(EventRow), Effect.orDie),

      listDeliveries: (accountId, endpointId, limit) =>
        Effect.gen(function*() {
          const deliveries = yield* sql`
            select d.id::text as id, d.event_id as "eventId", e.type, d.status, d.attempts, d.response_status as "responseStatus",
                   d.last_error as "lastError", d.created_at as "createdAt", d.next_attempt_at as "nextAttemptAt",
                   d.delivered_at as "deliveredAt"
            from webhook_deliveries d join webhook_events e on e.id = d.event_id
            where d.account_id = ${accountId} and d.endpoint_id = ${endpointId}::uuid
            order by d.created_at desc, d.id limit ${limit}`.pipe(rows(DeliveryHead))
          if (deliveries.length === 0) return []
          const attempts = yield* sql`
            select delivery_id::text as "deliveryId", attempt, at, response_status as "responseStatus", error, duration_ms as "durationMs"
            from webhook_attempts where delivery_id = any(${deliveries.map((row) => row.id)}::uuid[]) order by attempt`.pipe(
            rows(DeliveryAttempt)
          )
          return deliveries.map((row): DeliveryRow => ({
            ...row,
            log: attempts.filter((a) => a.deliveryId === row.id).map(({ deliveryId: _, ...attempt }) => attempt)
          }))
        }).pipe(Effect.orDie),

      retryDelivery: (accountId, endpointId, deliveryId, at) =>
        sql`
          update webhook_deliveries set status = 'pending', next_attempt_at = ${at},
            -- An attempt in flight keeps its lease: a retry never makes a second, concurrent one.
            claimed_until = case when claimed_until >= ${at} then claimed_until else null end
          where account_id = ${accountId} and endpoint_id = ${endpointId}::uuid and id = ${deliveryId}::uuid
          returning id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),

      claimDue: (at, leaseUntil, limit, perAccount) =>
        // One claim at a time across processes (a transaction-scoped advisory lock), so the leases
        // counted per account include every process's; SKIP LOCKED and the lease still keep a row
        // from being taken twice. Round-robin: every account's oldest due row ranks 1, its second 2...
        Effect.gen(function*() {
          yield* sql`select pg_advisory_xact_lock(${CLAIM_LOCK}::bigint)`
          return yield* sql`
            with leased as (
              select account_id, count(*)::int as n from webhook_deliveries
              where claimed_until >= ${at} and status = 'pending'
              group by account_id
            ), ranked as (
              select d.account_id, d.id, d.next_attempt_at,
                     row_number() over (partition by d.account_id order by d.next_attempt_at, d.id) as rank
              from webhook_deliveries d join webhook_endpoints e on e.account_id = d.account_id and e.id = d.endpoint_id and e.enabled
              where d.status = 'pending' and d.next_attempt_at <= ${at} and (d.claimed_until is null or d.claimed_until < ${at})
            ), picked as (
              select r.account_id, r.id from ranked r left join leased l on l.account_id = r.account_id
              where r.rank <= ${perAccount} - coalesce(l.n, 0)
              order by r.rank, r.next_attempt_at, r.id
              limit ${limit}
            ), due as (
              select d.account_id, d.id from webhook_deliveries d join picked p on p.account_id = d.account_id and p.id = d.id
              where d.status = 'pending' and d.next_attempt_at <= ${at} and (d.claimed_until is null or d.claimed_until < ${at})
              for update of d skip locked
            )
            update webhook_deliveries d set claimed_until = ${leaseUntil}
            from due, webhook_events ev, webhook_endpoints e
            where d.account_id = due.account_id and d.id = due.id and ev.account_id = d.account_id and ev.id = d.event_id
              and e.account_id = d.account_id and e.id = d.endpoint_id
            returning d.id::text as id, d.account_id::int as "accountId", d.endpoint_id::text as "endpointId", d.event_id as "eventId",
                      ev.body, d.attempts, e.url, e.secret, e.previous_secret as "previousSecret",
                      e.previous_secret_until as "previousSecretUntil"`.pipe(rows(ClaimedDelivery))
        }).pipe(sql.withTransaction, Effect.orDie),

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
          values (${h.accountId}, ${h.brandId}, ${h.channel}, date_trunc('hour', ${h.at}::timestamptz), ${h.format}, ${h.deliveries},
                  ${h.records}, ${h.accepted}, ${h.skipped}, ${h.unparseable}, ${h.signatureFailures}, ${h.at})
          on conflict (account_id, brand_id, channel, hour) do update set
            format = excluded.format, deliveries = ingestion_health.deliveries + excluded.deliveries,
            records = ingestion_health.records + excluded.records, accepted = ingestion_health.accepted + excluded.accepted,
            skipped = ingestion_health.skipped + excluded.skipped, unparseable = ingestion_health.unparseable + excluded.unparseable,
            signature_failures = ingestion_health.signature_failures + excluded.signature_failures,
            last_received_at = greatest(ingestion_health.last_received_at, excluded.last_received_at)`.pipe(Effect.asVoid, Effect.orDie),

      health: (accountId, brandId, since) =>
        sql`
          select channel, (array_agg(format order by hour desc))[1] as format, max(last_received_at) as "lastReceivedAt",
                 (coalesce(sum(deliveries) filter (where hour >= ${since}), 0))::int as deliveries,
                 (coalesce(sum(records) filter (where hour >= ${since}), 0))::int as records,
                 (coalesce(sum(accepted) filter (where hour >= ${since}), 0))::int as accepted,
                 (coalesce(sum(skipped) filter (where hour >= ${since}), 0))::int as skipped,
                 (coalesce(sum(unparseable) filter (where hour >= ${since}), 0))::int as unparseable,
                 (coalesce(sum(signature_failures) filter (where hour >= ${since}), 0))::int as "signatureFailures"
          from ingestion_health where account_id = ${accountId} and brand_id = ${brandId}
          group by channel order by channel`.pipe(rows(ChannelHealthRow), Effect.orDie),

      stalledChannels: (activeSince, quietSince) =>
        sql`
          select account_id::int as "accountId", brand_id as "brandId", channel, max(last_received_at) as "lastReceivedAt"
          from ingestion_health
          where hour >= date_trunc('hour', ${activeSince}::timestamptz)
          group by account_id, brand_id, channel
          having max(last_received_at) >= ${activeSince} and max(last_received_at) < ${quietSince}`.pipe(rows(QuietChannel), Effect.orDie),

      activeBrands: (activeSince) =>
        sql`
          select distinct account_id::int as "accountId", brand_id as "brandId" from ingestion_health
          where hour >= date_trunc('hour', ${activeSince}::timestamptz)`.pipe(rows(ActiveBrand), Effect.orDie),

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
