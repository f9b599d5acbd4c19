import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { McpTool } from "../platform/McpTool.js"
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
      .annotate(McpTool, { name: "list_brands", page: { field: "brands", limit: 50 } })
      .annotate(OpenApi.Summary, "Brands of the account")
      .annotate(OpenApi.Description, BrandsDescriptions.list)
  )
  .add(
    HttpApiEndpoint.get("get", "/brands/:slug")
      .annotate(McpTool, { name: "get_brand" })
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

/**
 * The most a brand stores, as sent (docs/security.md "Sizes bounded at the source"): generous for any
 * real brand, and what keeps a brand's record, its cache entry and the analysis of an answer small.
 */
export const BRAND_LIMITS = {
  /** brand_name and a competitor's name. */
  name: 200,
  /** domain, as typed (a URL is accepted: its host is kept). */
  domain: 2048,
  /** Aliases of the brand, and of each competitor. */
  aliases: 50,
  alias: 100,
  /** Tracked competitors of one brand. */
  competitors: 50,
  prompt: 2000,
  topic: 200,
  sourceQuery: 2000,
  drainSecret: 1024,
  region: 64,
  language: 64
} as const

/** A text of at most `max` characters (the OpenAPI document shows maxLength); more is a 400. */
export const BoundedText = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/** Aliases as stored and shown (rows stored before the bounds may hold more). */
export const Aliases = Schema.Array(Schema.String)

/** Aliases as sent: at most 50, each at most 100 characters. */
export const AliasesInput = Schema.Array(BoundedText(BRAND_LIMITS.alias)).pipe(
  Schema.maxItems(BRAND_LIMITS.aliases, { message: () => `at most ${BRAND_LIMITS.aliases} aliases` })
)

export const CreateBrandPayload = Schema.Struct({
  // Optional: left out, the server makes it from brand_name (src/brands/Slug.ts), as the web form shows.
  brand_slug: Schema.optional(Slug.annotations({
    description: "Brand slug: lowercase letters, digits and hyphens; default made from brand_name (accents dropped, & read as and, other characters hyphens)"
  })),
  brand_name: BoundedText(BRAND_LIMITS.name),
  domain: BoundedText(BRAND_LIMITS.domain),
  vertical: Vertical,
  primary_region: Schema.optional(BoundedText(BRAND_LIMITS.region)),
  primary_language: Schema.optional(BoundedText(BRAND_LIMITS.language)),
  aliases: Schema.optional(AliasesInput)
})

export const CreateCompetitorPayload = Schema.Struct({
  name: BoundedText(BRAND_LIMITS.name),
  domain: BoundedText(BRAND_LIMITS.domain),
  aliases: Schema.optional(AliasesInput),
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
  prompt: BoundedText(BRAND_LIMITS.prompt),
  topic: Schema.optional(BoundedText(BRAND_LIMITS.topic)),
  intent: Schema.optional(
    Schema.Literal(...PROMPT_INTENTS).annotations({ message: () => ({ message: `must be one of ${PROMPT_INTENTS.join(", ")}`, override: true }) })
  ),
  source: Schema.optional(
    Schema.Literal(...PROMPT_SOURCES).annotations({ message: () => ({ message: `must be one of ${PROMPT_SOURCES.join(", ")}`, override: true }) })
  ),
  source_query: Schema.optional(BoundedText(BRAND_LIMITS.sourceQuery))
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

export const DrainSecretPayload = Schema.Struct({ secret: Schema.optional(Schema.NullOr(BoundedText(BRAND_LIMITS.drainSecret))) })

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
