import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SessionAuth } from "../accounts/Api.js"
import { SlugPath } from "../brands/Api.js"
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnauthorizedError
} from "../platform/HttpErrors.js"
import { ENGINE_SLUGS } from "../platform/Schemas.js"
import { MAX_IMPORT_OBSERVATIONS } from "./Observations.js"

/** Dashboard import of answer observations (docs/decisions.md "The dashboard surface"; docs/observations.md). */

export const ImportResponse = Schema.Struct({
  imported: Schema.Int.annotations({ description: "Observations stored (analysed once, now)" }),
  skipped: Schema.Int.annotations({
    description: "Valid observations already stored (same brand, prompt, engine, region, language and observed_at), or repeated in this body"
  }),
  errors: Schema.Array(
    Schema.Struct({
      line: Schema.Int.annotations({ description: "JSON array: position in the array, from 1. NDJSON: line of the body, from 1" }),
      error: Schema.String
    })
  ).annotations({ description: "Records that were not stored, and why" })
}).annotations({ identifier: "ObservationImportResponse" })

const ScanEngineStatus = Schema.Struct({
  engine: Schema.String.annotations({ description: "Engine slug" }),
  scanned_at: Schema.String.annotations({ description: "Time of the brand's last scan on this engine (ISO 8601)" }),
  observations: Schema.Int.annotations({ description: "Observations that scan stored" }),
  failures: Schema.Int.annotations({ description: "Calls that failed after their retries, or were skipped" }),
  failures_by_reason: Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
    description:
      "The failed calls by reason: refused, blocked, incomplete, empty (the engine gave no real answer: never an observation, so " +
      "never counted in any n), insufficient_quota (billing, not retried), unauthorized, rate_limited, provider_error, timeout, " +
      "network, bad_response, config, skipped (the engine was given up for the rest of the scan); {} when none failed"
  }),
  last_error: Schema.NullOr(Schema.String).annotations({
    description: "Why the last failed call failed (or that the monthly token budget is spent); null when every call succeeded"
  }),
  tokens: Schema.Number.annotations({ description: "Tokens the provider reported for that scan's answers" })
})

export const ScanStatusResponse = Schema.Struct({
  brand_slug: Schema.String,
  engines: Schema.Array(ScanEngineStatus).annotations({ description: "The last scan per engine, engines alphabetical; empty before the first scan" }),
  month_tokens: Schema.Number.annotations({ description: "Tokens the account's scans used this UTC month" }),
  monthly_token_budget: Schema.NullOr(Schema.Number).annotations({ description: "SCAN_MONTHLY_TOKEN_BUDGET; null when unset" })
}).annotations({ identifier: "ScanStatusResponse" })

export const ScanRequestResponse = Schema.Struct({
  brand_slug: Schema.String,
  next_scan_at: Schema.String.annotations({ description: "When the scan is due (ISO 8601): now, or sooner when it already was" }),
  engines: Schema.Array(Schema.String).annotations({ description: "The engines the scan asks (engine slugs)" }),
  scanner_interval_seconds: Schema.Int.annotations({ description: "How often the server's scanner wakes: the scan starts within this many seconds" })
}).annotations({ identifier: "ScanRequestResponse" })

const ObservationDoc = {
  type: "object",
  required: ["prompt", "engine", "observed_at", "response"],
  properties: {
    prompt: { type: "string", description: "Text of a monitored prompt (exact); an unknown text becomes a monitored prompt with source imported" },
    engine: { type: "string", enum: [...ENGINE_SLUGS] },
    region: { type: "string", description: "ISO-3166-1 alpha-2; default the brand's primary region" },
    language: { type: "string", description: "ISO-639-1; default the brand's primary language" },
    observed_at: { type: "string", format: "date-time", description: "ISO 8601 with a time zone" },
    response: { type: "string", description: "Full answer text" },
    citations: { type: "array", items: { type: "string", format: "uri" } },
    fanouts: {
      type: "array",
      items: {
        type: "object",
        required: ["sub_question"],
        properties: { sub_question: { type: "string" }, citations: { type: "array", items: { type: "string", format: "uri" } } }
      }
    }
  }
}

/** The body is read raw (handleRaw): a JSON array or NDJSON, detected from the body; this documents it. */
const importRequestBody = {
  required: true,
  description:
    `Answer observations, at most ${MAX_IMPORT_OBSERVATIONS} (more answers 413): a JSON array, or NDJSON (one observation per line). ` +
    "The encoding is detected from the body, not from Content-Type; a gzip body is detected by its magic bytes.",
  content: {
    "application/json": { schema: { type: "array", items: ObservationDoc } },
    "application/x-ndjson": { schema: { type: "string", description: "One observation (JSON) per line" } }
  }
}

export class ObservationsGroup extends HttpApiGroup.make("observations")
  .annotate(OpenApi.Description, "Answer observations in (an import) and the brand's scans")
  .add(
    HttpApiEndpoint.post("import", "/me/brands/:slug/observations")
      .setPath(SlugPath)
      .addSuccess(ImportResponse)
      .annotate(OpenApi.Summary, "Import answer observations")
      .annotate(
        OpenApi.Description,
        "Each observation is validated on its own and analysed once (mentions, rank, sentiment, snippet, citations and " +
          "their buckets, fan-outs). Idempotent: an observation already stored is counted in skipped."
      )
      .annotate(OpenApi.Override, { requestBody: importRequestBody })
  )
  .add(
    HttpApiEndpoint.get("scans", "/me/brands/:slug/scans")
      .setPath(SlugPath)
      .addSuccess(ScanStatusResponse)
      .annotate(OpenApi.Summary, "The brand's last scan per answer engine")
      .annotate(OpenApi.Description, "When each engine was last scanned for the brand, what it stored, what failed and why (counted by reason), and the tokens used.")
  )
  .add(
    HttpApiEndpoint.post("requestScan", "/me/brands/:slug/scans")
      .setPath(SlugPath)
      .addSuccess(ScanRequestResponse, { status: 202 })
      .addError(ConflictError)
      .addError(ServiceUnavailableError)
      .annotate(OpenApi.Summary, "Scan the brand now")
      .annotate(
        OpenApi.Description,
        "Moves the brand's next scan to now; the server's scanner starts it at its next wake-up, as any due scan. Paid plans only " +
          "(403 on the free plan, and for a brand beyond the plan's brand cap or when the monthly token budget is spent); 503 when " +
          "no answer engine is configured; 409 within an hour of the brand's last scan."
      )
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .addError(ForbiddenError)
  .addError(NotFoundError)
  .addError(PayloadTooLargeError)
  .middleware(SessionAuth)
{}
