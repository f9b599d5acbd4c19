import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi, OpenApiJsonSchema } from "@effect/platform"
import { Schema } from "effect"
import { BearerAuth } from "../accounts/Api.js"
import {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  UnauthorizedError
} from "../platform/HttpErrors.js"
import { Count, Str } from "../platform/Schemas.js"
import { LogFormatSchema } from "./formats/common.js"

/** Server-log ingestion (docs/ingestion.md; docs/decisions.md). */

export const MAX_BATCH_RECORDS = 2000

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

/** docs/ingestion.md: one server-log record of a batch. `ua` and `path` are required (docs/decisions.md). */
export const ServerLogRecord = Schema.Struct({
  ua: Str("User-Agent of the request"),
  path: Str("Request path, may include the query string"),
  ref: Schema.optional(Str("Referrer")),
  ip: Schema.optional(Str("Client IP address")),
  ts: Schema.optional(
    Schema.Int.annotations({
      description: "Request time: Unix seconds when below 100000000000, else Unix milliseconds; default the receive time"
    })
  ),
  status: Schema.optional(Schema.Int.annotations({ description: "HTTP status of the response" })),
  method: Schema.optional(Str("HTTP method")),
  country: Schema.optional(Str("ISO-3166-1 alpha-2 country of the client")),
  id: Schema.optional(
    Schema.String.annotations({
      description:
        "The record's key, at most 200 characters: a record sent again with the same id is stored once " +
        "(a longer id skips the record)"
    })
  ),
  host: Schema.optional(Str("Host name the request was made to"))
}).annotations({ description: "One request from a server log" })
export type ServerLogRecord = typeof ServerLogRecord.Type

/** docs/ingestion.md: the fields of a log-drain record that are read (documentation; records are parsed by the service). */
export const DrainProxy = Schema.Struct({
  timestamp: Schema.optional(Schema.Number.annotations({ description: "Unix milliseconds" })),
  method: Schema.optional(Str("HTTP method; a record is a request only when proxy.method is present")),
  host: Schema.optional(Str("Customer-facing hostname (preferred over host)")),
  path: Schema.optional(Str("Request path including the query string")),
  userAgent: Schema.optional(
    Schema.Array(Schema.String).annotations({ description: "User-Agent: an array, not a string" })
  ),
  referer: Schema.optional(Str("Referrer")),
  region: Schema.optional(Str("Platform edge region identifier; not a country")),
  statusCode: Schema.optional(
    Schema.Int.annotations({ description: "HTTP status; -1 is a sentinel (crash or background revalidation)" })
  ),
  clientIp: Schema.optional(Str("Client IP; omitted when the drain hides IP addresses"))
}).annotations({ description: "Present only for records describing a served HTTP request" })

export const DrainRecord = Schema.Struct({
  id: Schema.optional(Str("Record id")),
  source: Schema.optional(
    Schema.Literal("build", "edge", "lambda", "static", "external", "firewall", "redirect").annotations({
      description: "Record source"
    })
  ),
  host: Schema.optional(Str("Deployment hostname")),
  timestamp: Schema.optional(Schema.Number.annotations({ description: "Unix milliseconds" })),
  proxy: Schema.optional(DrainProxy)
}).annotations({ description: "One log-drain record (only the fields read are listed)" })
export type DrainRecord = typeof DrainRecord.Type

// ---------------------------------------------------------------------------
// POST /agents/ingest
// ---------------------------------------------------------------------------

const documented = (schema: Schema.Schema.Any) => OpenApiJsonSchema.makeWithDefs(schema, { defs: {} })

export const IngestPayload = Schema.Struct({
  site_id: Str("The brand's public site id (a UUID); must belong to the authenticated account"),
  records: Schema.Array(Schema.Unknown).annotations({
    message: () => "must be an array",
    jsonSchema: {
      type: "array",
      items: documented(ServerLogRecord),
      description:
        `Server-log records, at most ${MAX_BATCH_RECORDS} (more returns 413). ` +
        "Each record is validated on its own: an invalid record is skipped, not the whole batch."
    }
  }),
  channel: Schema.optional(
    Str("Label of the forwarder: edge_worker, cdn_webhook, csv_upload or api (the default)")
  )
}).annotations({ identifier: "IngestPayload" })

export const IngestResponse = Schema.Struct({
  accepted: Count("Crawler hits stored"),
  monthly_used: Count("Crawler hits stored this calendar month (UTC), both ingestion endpoints"),
  monthly_cap: Count("The plan's monthly server-log event cap")
}).annotations({ identifier: "IngestResponse" })

// ---------------------------------------------------------------------------
// POST /agents/ingest/drain
// ---------------------------------------------------------------------------

export const DrainUrlParams = Schema.Struct({
  site_id: Schema.optional(
    Schema.Union(Schema.String, Schema.Array(Schema.String)).annotations({
      description:
        "The brand's public site id (a UUID), checked for ownership; may instead be sent in header x-service-site. " +
        "When repeated, the first value counts."
    })
  ),
  verify: Schema.optional(
    Schema.Union(Schema.String, Schema.Array(Schema.String)).annotations({
      description:
        "Echoed back as response headers x-drain-verify and x-vercel-verify on every response, errors included. When " +
        "repeated, the first value is echoed; characters a header cannot carry are dropped"
    })
  ),
  format: Schema.optional(
    // The formats as a literal (OpenAPI lists them, the typed client names them); case and the spaces around
    // are not checked by the schema but by the service, so another value answers its own 400.
    Schema.Union(LogFormatSchema, Schema.String, Schema.Array(Schema.String)).annotations({
      description:
        "The log format of the body (LogFormat; auto, the default, detects it from the content), in any case. " +
        "Another value answers 400. When repeated, the first value counts"
    })
  )
})

export const DrainHeaders = Schema.Struct({
  "x-service-site": Schema.optional(Str("The brand's public site id, when not given as query site_id")),
  "x-drain-signature": Schema.optional(
    Str("Hex HMAC-SHA1 of the raw body with the drain's signing secret; required once a secret is saved")
  ),
  "x-vercel-signature": Schema.optional(
    Str(
      "The same signature under the name a Vercel drain sends it (hex HMAC-SHA1 of the raw body with the drain's " +
        "secret); either header may carry it"
    )
  )
})

export const DrainResponse = Schema.Struct({
  accepted: Count("Crawler hits stored"),
  scanned: Count("Records seen"),
  skipped: Count(
    "Records that were not AI-crawler requests (no proxy object, other user agents, AI referrals, malformed records)"
  ),
  monthly_used: Count("Crawler hits stored this calendar month (UTC), both ingestion endpoints"),
  monthly_cap: Count("The plan's monthly server-log event cap")
}).annotations({ identifier: "DrainResponse" })

/** The drain body is read raw (handleRaw); this documents it in the OpenAPI document. */
const drainRequestBody = {
  required: true,
  description:
    "A JSON array of log-drain records, or NDJSON (one record per line), or text lines, in the format of the " +
    "`format` parameter (Vercel, Cloudflare Logpush, Fastly, Akamai DataStream 2, Netlify, CloudFront standard logs, " +
    "nginx/Apache combined) or detected record by record. The encoding is detected from the body, not from " +
    "Content-Type; gzip is detected by magic bytes. A body that cannot be parsed still answers 200.",
  content: {
    "application/json": { schema: { type: "array", items: documented(DrainRecord) } },
    "application/x-ndjson": { schema: { type: "string", description: "One log-drain record (JSON) per line" } }
  }
}

// ---------------------------------------------------------------------------
// Endpoint middlewares (they run outside the group's BearerAuth)
// ---------------------------------------------------------------------------

/** Echoes the drain's `verify` query value as x-drain-verify and x-vercel-verify on every response, 401s included. */
export class DrainVerify extends HttpApiMiddleware.Tag<DrainVerify>()("DrainVerify") {}

/** Refuses a batch whose Content-Length is over INGEST_MAX_BODY_BYTES with 413, before the body is read. */
export class BatchBodyLimit extends HttpApiMiddleware.Tag<BatchBodyLimit>()("BatchBodyLimit", {
  failure: PayloadTooLargeError
}) {}

// ---------------------------------------------------------------------------
// Group
// ---------------------------------------------------------------------------

export class IngestionGroup extends HttpApiGroup.make("ingestion")
  .annotate(OpenApi.Description, "Server-side request logs in: a batch of records, or a hosting platform's log-drain delivery")
  .add(
    HttpApiEndpoint.post("ingest", "/agents/ingest")
      .middleware(BatchBodyLimit)
      .setPayload(IngestPayload)
      .addSuccess(IngestResponse)
      .annotate(OpenApi.Summary, "Ingest a batch of server-log records")
      .annotate(
        OpenApi.Description,
        "Paid plans only. Each User-Agent is classified with the crawler catalog; recognised crawler hits are stored " +
          "and counted against the monthly cap (a batch crossing it stores what fits)."
      )
  )
  .add(
    HttpApiEndpoint.post("drain", "/agents/ingest/drain")
      .middleware(DrainVerify)
      .setUrlParams(DrainUrlParams)
      .setHeaders(DrainHeaders)
      .addSuccess(DrainResponse)
      .annotate(OpenApi.Summary, "Receive a hosting platform's log-drain delivery")
      .annotate(
        OpenApi.Description,
        "Growth plan or higher. Hits are stored with channel drain. Only a bad token, a site not owned by the account, " +
          "a signature mismatch, a plan not entitled or a spent quota answer non-2xx."
      )
      .annotate(OpenApi.Override, { requestBody: drainRequestBody })
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .addError(ForbiddenError)
  .addError(NotFoundError)
  .addError(PayloadTooLargeError)
  .addError(QuotaExceededError)
  .middleware(BearerAuth)
{}
