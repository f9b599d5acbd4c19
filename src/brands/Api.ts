import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BearerAuth, SessionAuth } from "../accounts/Api.js"
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PlanLimitReachedError,
  UnauthorizedError
} from "../platform/HttpErrors.js"
import { DateTime, Slug, Uuid, Vertical } from "../platform/Schemas.js"
import { BrandsDescriptions } from "./ApiDescriptions.js"

/** A brand as the API shows it. */
export const Brand = Schema.Struct({
  id: Schema.Int,
  brand_slug: Schema.String,
  brand_name: Schema.String,
  domain: Schema.String.annotations({ description: "The brand's hostname" }),
  vertical: Schema.String.annotations({ description: "saas, retail, finance, healthcare or other" }),
  scan_frequency_hours: Schema.Int.annotations({ description: "Rescan cadence, set by the account's plan" }),
  next_scan_at: DateTime,
  site_id: Schema.UUID.annotations({ description: "Public site id of the JavaScript tag and the ingestion endpoints" }),
  added_at: DateTime
}).annotations({ identifier: "Brand" })
export type Brand = typeof Brand.Type

export const BrandList = Schema.Struct({
  brands: Schema.Array(Brand),
  count: Schema.Int.annotations({ description: "Brands in this response" }),
  limit: Schema.Int.annotations({ description: "Brands the account's plan allows" })
}).annotations({ identifier: "BrandList" })

export const SlugPath = Schema.Struct({ slug: Slug })

export class BrandsGroup extends HttpApiGroup.make("brands")
  .annotate(OpenApi.Description, "The account's tracked brands")
  .add(
    HttpApiEndpoint.get("list", "/brands").addSuccess(BrandList)
      .annotate(OpenApi.Summary, "Brands of the account")
      .annotate(OpenApi.Description, BrandsDescriptions.list)
  )
  .add(
    HttpApiEndpoint.get("get", "/brands/:slug")
      .setPath(SlugPath)
      .addSuccess(Brand)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "One brand by its slug")
      .annotate(OpenApi.Description, BrandsDescriptions.get)
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .middleware(BearerAuth)
{}

// ---------------------------------------------------------------------------
// Dashboard: brands, competitors, monitored prompts, drain secret
// ---------------------------------------------------------------------------

export const Aliases = Schema.Array(Schema.String)

export const CreateBrandPayload = Schema.Struct({
  brand_slug: Slug,
  brand_name: Schema.String,
  domain: Schema.String,
  vertical: Vertical,
  primary_region: Schema.optional(Schema.String),
  primary_language: Schema.optional(Schema.String),
  aliases: Schema.optional(Aliases)
})

export const CreateCompetitorPayload = Schema.Struct({
  name: Schema.String,
  domain: Schema.String,
  aliases: Schema.optional(Aliases),
  pinned: Schema.optional(Schema.Boolean)
})

export const Competitor = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  domain: Schema.String,
  aliases: Aliases,
  pinned: Schema.Boolean,
  created_at: DateTime
}).annotations({ identifier: "Competitor" })

export const PROMPT_INTENTS = ["informational", "commercial", "transactional", "navigational", "comparison"] as const
export const PROMPT_SOURCES = ["manual", "suggested", "imported", "search_query"] as const

export const CreatePromptPayload = Schema.Struct({
  prompt: Schema.String,
  topic: Schema.optional(Schema.String),
  intent: Schema.optional(
    Schema.Literal(...PROMPT_INTENTS).annotations({ message: () => ({ message: `must be one of ${PROMPT_INTENTS.join(", ")}`, override: true }) })
  ),
  source: Schema.optional(
    Schema.Literal(...PROMPT_SOURCES).annotations({ message: () => ({ message: `must be one of ${PROMPT_SOURCES.join(", ")}`, override: true }) })
  ),
  source_query: Schema.optional(Schema.String)
})

/** the OpenAPI document. */
export const MonitoredPrompt = Schema.Struct({
  id: Uuid,
  prompt: Schema.String,
  topic: Schema.String,
  intent: Schema.String,
  created_at: DateTime,
  source: Schema.String,
  source_query: Schema.String
}).annotations({ identifier: "MonitoredPrompt" })

export const DrainSecretPayload = Schema.Struct({ secret: Schema.optional(Schema.NullOr(Schema.String)) })

export class DashboardBrandsGroup extends HttpApiGroup.make("dashboardBrands")
  .annotate(OpenApi.Description, "The account's brands, competitors and monitored prompts, as the web application manages them")
  .add(
    HttpApiEndpoint.get("list", "/me/brands").addSuccess(BrandList).annotate(OpenApi.Summary, "Brands of the account")
  )
  .add(
    HttpApiEndpoint.post("create", "/me/brands")
      .setPayload(CreateBrandPayload)
      .addSuccess(Brand, { status: 201 })
      .addError(ConflictError)
      .addError(PlanLimitReachedError)
      .annotate(OpenApi.Summary, "Add a brand")
  )
  .add(
    HttpApiEndpoint.post("addCompetitor", "/me/brands/:slug/competitors")
      .setPath(SlugPath)
      .setPayload(CreateCompetitorPayload)
      .addSuccess(Competitor, { status: 201 })
      .addError(ConflictError)
      .annotate(OpenApi.Summary, "Add a competitor to a brand")
  )
  .add(
    HttpApiEndpoint.post("addPrompt", "/me/brands/:slug/prompts")
      .setPath(SlugPath)
      .setPayload(CreatePromptPayload)
      .addSuccess(MonitoredPrompt, { status: 201 })
      .addError(ConflictError)
      .addError(PlanLimitReachedError)
      .annotate(OpenApi.Summary, "Add a monitored prompt to a brand")
  )
  .add(
    HttpApiEndpoint.put("setDrainSecret", "/me/brands/:slug/drain-secret")
      .setPath(SlugPath)
      .setPayload(DrainSecretPayload)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Save or clear the brand's drain signing secret")
  )
  .addError(BadRequestError)
  .addError(NotFoundError)
  .addError(ForbiddenError)
  .middleware(SessionAuth)
{}
