import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SessionAuth } from "../accounts/Api.js"
import { SlugPath } from "../brands/Api.js"
import { BadRequestError, ForbiddenError, NotFoundError } from "../platform/HttpErrors.js"
import { DateTime, Uuid } from "../platform/Schemas.js"

/** Dashboard surface: webhook endpoints, their deliveries, the event log, ingestion health (docs/webhooks.md). */

const rateLimitedFields = { error: Schema.String }

/** Too many test pings: `{"error": "rate limit exceeded"}`, with Retry-After (seconds) and the RateLimit headers. */
export class TestRateLimited extends Schema.TaggedError<TestRateLimited>()("TestRateLimited", rateLimitedFields) {}

/** The wire form, as the platform's errors are made (src/platform/HttpErrors.ts): the body without `_tag`. */
export const TestRateLimitedError = Schema.transform(Schema.Struct(rateLimitedFields), TestRateLimited, {
  strict: false,
  decode: (body) => ({ ...body, _tag: "TestRateLimited" as const }),
  encode: ({ _tag: _, ...body }) => body
}).annotations(HttpApiSchema.annotations({ status: 429, description: "Too many test pings for this account: wait Retry-After seconds" }))

export const WebhookEndpoint = Schema.Struct({
  id: Schema.UUID,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  description: Schema.String,
  enabled: Schema.Boolean,
  created_at: DateTime,
  disabled_reason: Schema.NullOr(Schema.String).annotations({
    description: "Why the endpoint was disabled automatically (5 days of failures); null otherwise"
  }),
  failing_since: Schema.NullOr(DateTime).annotations({ description: "Start of the current run of failed attempts" })
}).annotations({ identifier: "WebhookEndpoint" })

export const CreatedWebhook = Schema.Struct({
  ...WebhookEndpoint.fields,
  secret: Schema.String.annotations({ description: "whsec_ + base64 of 32 random bytes: shown this once" })
})

export const WebhookList = Schema.Struct({ webhooks: Schema.Array(WebhookEndpoint), count: Schema.Int })

export const CreateWebhookPayload = Schema.Struct({
  url: Schema.String,
  events: Schema.Array(Schema.String),
  description: Schema.optional(Schema.NullOr(Schema.String))
})

export const PatchWebhookPayload = Schema.Struct({
  url: Schema.optional(Schema.String),
  events: Schema.optional(Schema.Array(Schema.String)),
  description: Schema.optional(Schema.NullOr(Schema.String)),
  enabled: Schema.optional(Schema.Boolean)
})

export const RotatedSecret = Schema.Struct({ secret: Schema.String })

export const Attempt = Schema.Struct({
  attempt: Schema.Int,
  at: DateTime,
  response_status: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Int
})

export const Delivery = Schema.Struct({
  id: Schema.UUID,
  event_id: Schema.String,
  type: Schema.String,
  status: Schema.String.annotations({ description: "pending, delivered or failed" }),
  attempts: Schema.Int,
  response_status: Schema.NullOr(Schema.Int),
  created_at: DateTime,
  next_attempt_at: Schema.NullOr(DateTime),
  delivered_at: Schema.NullOr(DateTime),
  last_error: Schema.NullOr(Schema.String),
  attempt_log: Schema.Array(Attempt)
}).annotations({ identifier: "WebhookDelivery" })

export const DeliveryList = Schema.Struct({ deliveries: Schema.Array(Delivery), count: Schema.Int })

export const EventLogEntry = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  created_at: DateTime,
  // Any JSON (the event's own data); written out so that the documents carry no `$id` of Schema.Unknown.
  data: Schema.Unknown.annotations({
    jsonSchema: {
      type: ["object", "array", "string", "number", "boolean", "null"],
      description: "The event's data, as its deliveries carry it (null when it has none)"
    }
  })
})
export const EventLog = Schema.Struct({ events: Schema.Array(EventLogEntry), count: Schema.Int })

export const ChannelHealth = Schema.Struct({
  channel: Schema.String,
  format: Schema.String,
  last_received_at: Schema.NullOr(DateTime),
  deliveries_24h: Schema.Int,
  records_24h: Schema.Int,
  accepted_24h: Schema.Int,
  skipped_24h: Schema.Int,
  unparseable_24h: Schema.Int,
  signature_failures_24h: Schema.Int
})

export const IngestionHealth = Schema.Struct({
  channels: Schema.Array(ChannelHealth),
  spool_pending: Schema.Int,
  monthly_used: Schema.Int,
  monthly_cap: Schema.Int
})

export const WebhookIdPath = Schema.Struct({ id: Uuid })
export const DeliveryPath = Schema.Struct({ id: Uuid, delivery_id: Uuid })

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .annotate(OpenApi.Description, "Webhook endpoints, their deliveries, and the event log")
  .add(
    HttpApiEndpoint.post("create", "/me/webhooks")
      .setPayload(CreateWebhookPayload)
      .addSuccess(CreatedWebhook, { status: 201 })
      .annotate(OpenApi.Summary, "Create a webhook endpoint (its secret is shown once)")
      .annotate(OpenApi.Description, "At most WEBHOOK_MAX_ENDPOINTS endpoints per account (default 20); beyond, 403")
  )
  .add(HttpApiEndpoint.get("list", "/me/webhooks").addSuccess(WebhookList).annotate(OpenApi.Summary, "The account's webhook endpoints"))
  .add(
    HttpApiEndpoint.patch("update", "/me/webhooks/:id")
      .setPath(WebhookIdPath)
      .setPayload(PatchWebhookPayload)
      .addSuccess(WebhookEndpoint)
      .annotate(OpenApi.Summary, "Change a webhook endpoint")
  )
  .add(HttpApiEndpoint.del("remove", "/me/webhooks/:id").setPath(WebhookIdPath).addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a webhook endpoint"))
  .add(
    HttpApiEndpoint.post("test", "/me/webhooks/:id/test")
      .setPath(WebhookIdPath)
      .addSuccess(HttpApiSchema.Empty(202))
      .addError(TestRateLimitedError)
      .annotate(OpenApi.Summary, "Send a ping event")
      .annotate(OpenApi.Description, "At most WEBHOOK_TEST_LIMIT pings per account (default 10 a minute); beyond, 429 with Retry-After")
  )
  .add(HttpApiEndpoint.post("rotate", "/me/webhooks/:id/rotate-secret").setPath(WebhookIdPath).addSuccess(RotatedSecret)
      .annotate(OpenApi.Summary, "Rotate a webhook endpoint's signing secret"))
  .add(HttpApiEndpoint.get("deliveries", "/me/webhooks/:id/deliveries").setPath(WebhookIdPath).addSuccess(DeliveryList)
      .annotate(OpenApi.Summary, "A webhook endpoint's recent deliveries"))
  .add(
    HttpApiEndpoint.post("retry", "/me/webhooks/:id/deliveries/:delivery_id/retry")
      .setPath(DeliveryPath)
      .addSuccess(HttpApiSchema.Empty(202))
      .annotate(OpenApi.Summary, "Deliver a failed delivery again")
  )
  .add(HttpApiEndpoint.get("events", "/me/webhook-events").addSuccess(EventLog).annotate(OpenApi.Summary, "The account's event log"))
  .add(HttpApiEndpoint.get("ingestion", "/me/brands/:slug/ingestion").setPath(SlugPath).addSuccess(IngestionHealth)
      .annotate(OpenApi.Summary, "The brand's ingestion health"))
  .addError(BadRequestError)
  .addError(NotFoundError)
  .addError(ForbiddenError)
  .middleware(SessionAuth)
{}
