import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { closedSet, McpTool } from "../platform/McpTool.js"
import { Schema } from "effect"
import { BearerAuth } from "../accounts/Api.js"
import { SlugPath } from "../brands/Api.js"
import { BadRequestError, NotFoundError, UnauthorizedError } from "../platform/HttpErrors.js"
import { AgentKindLiteral, Count, DateOnly, DateTime, Num, RangeEcho, RangeParam, Str } from "../platform/Schemas.js"
import { AgentsDescriptions } from "./ApiDescriptions.js"

/**
 * AI crawler and AI referral traffic of a brand's site (docs/agents.md, docs/decisions.md).
 */

const RetentionLimited = Schema.Boolean.annotations({
  description:
    "true when the requested range starts before coverage_from: crawler-filtered figures then cover only coverage_from onwards"
})
const CoverageFrom = DateOnly.annotations({
  description: "First day (YYYY-MM-DD) from which the per-(path, bot) rollup is complete for this brand"
})

// ---------------------------------------------------------------------------
// Query parameters
// ---------------------------------------------------------------------------

/** bot, vendor and kind combine with AND and apply to every aggregate of the response (docs/agents.md). */
const crawlerFilterFields = {
  bot: Schema.optional(Str("Exact bot name (as in breakdowns.by_bot)")),
  vendor: Schema.optional(Str("Exact vendor or platform: every bot that company operates")),
  kind: Schema.optional(
    AgentKindLiteral.annotations({
      description:
        "Crawler kind: training_crawler (collects model training data), search_crawler, browsing_agent " +
        "(live answer-time fetches), agentic_browser, mcp_client"
    })
  ),
  verification: Schema.optional(
    Schema.Literal("verified", "spoofed", "unverified").annotations({
      description:
        "Verdict of the hits (docs/verification.md): verified (the operator's published IP ranges, reverse DNS or " +
        "signature confirm it), spoofed (the operator publishes a method and the check failed), unverified (no " +
        "client IP, or no published method)",
      message: () => ({ message: "must be one of verified, spoofed, unverified", override: true })
    })
  )
}

/** The sort keys of a crawled-pages list (anything else falls back to hits). */
export const PAGE_SORT_COLUMNS = ["hits", "path", "errors", "uniques"] as const

export const AgentsUrlParams = Schema.Struct({
  range: RangeParam,
  ...crawlerFilterFields
})

/** An integer query parameter: a decimal string on the wire, documented as an integer. */
const intParam = (min: number, max: number | undefined, fallback: number, description: string) => {
  const message = max === undefined ? `must be an integer >= ${min}` : `must be an integer between ${min} and ${max}`
  return (max === undefined
    ? Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(min))
    : Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max))
  ).annotations({
    description,
    message: () => ({ message, override: true }),
    jsonSchema: {
      type: "integer",
      minimum: min,
      ...(max === undefined ? {} : { maximum: max }),
      default: fallback,
      description
    }
  })
}

export const AgentPagesUrlParams = Schema.Struct({
  range: RangeParam,
  ...crawlerFilterFields,
  folder: Schema.optional(
    Str("Top-level folder to restrict to: a folder name for /<folder>/*, or / for pages at the site root")
  ),
  sort: Schema.optional(
    Str("hits (default), path, errors or uniques; an unrecognised value falls back to hits, no error")
      .annotations(closedSet(PAGE_SORT_COLUMNS))
  ),
  dir: Schema.optional(
    Schema.Literal("asc", "desc").annotations({
      description:
        "Sort direction, only honoured alongside sort; default descending for numeric columns, ascending for path",
      message: () => ({ message: "must be asc or desc", override: true })
    })
  ),
  status: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^(ok|error|[1-5][0-9]{2})$/),
      Schema.annotations({
        description: "ok (status 200-399), error (status >= 400) or one exact 3-digit status code",
        message: () => "must be ok, error or a 3-digit status code"
      })
    )
  ),
  q: Schema.optional(Str("Case-insensitive substring of the path")),
  // Optional on both sides so the typed client may leave them out; the handler applies the defaults.
  limit: Schema.optional(intParam(1, 500, 100, "Page size, 1..500, default 100")),
  offset: Schema.optional(intParam(0, undefined, 0, "Rows to skip, default 0"))
})

/** GET /brands/{slug}/agents/pages/bots: one path, and the crawler filters of the other reads. */
export const PageBotsUrlParams = Schema.Struct({
  path: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)).annotations({
    description:
      "The page: a path as listed by /agents/pages (e.g. /pricing); a query string or a full URL is cut to its path, " +
      "escapes are compared in their canonical form",
    message: () => ({ message: "must be a path such as /pricing (1 to 4096 characters)", override: true })
  }),
  range: RangeParam,
  ...crawlerFilterFields
})

export const RangeUrlParams = Schema.Struct({ range: RangeParam })
export const SearchPerformanceUrlParams = RangeUrlParams
export const AttributionUrlParams = RangeUrlParams

// ---------------------------------------------------------------------------
// Crawled pages (docs/agents.md, docs/decisions.md)
// ---------------------------------------------------------------------------

export const CrawledPage = Schema.Struct({
  path: Str("Request path without the query string"),
  hits: Count("Matching crawler hits on this path"),
  errors: Count("Matching hits with status >= 400"),
  uniques: Count("Distinct bots that fetched the path"),
  bots: Schema.Array(Schema.String).annotations({ description: "Names of those bots" }),
  last_seen: DateTime.annotations({ description: "Time of the latest matching hit" })
}).annotations({ identifier: "CrawledPage" })

export const AgentPagesResponse = Schema.Struct({
  pages: Schema.Array(CrawledPage).annotations({ description: "One page of results, in the requested order" }),
  total: Count("Distinct paths matching the filters (all pages of results)"),
  limit: Count("Page size used"),
  offset: Count("Rows skipped"),
  retention_limited: RetentionLimited,
  coverage_from: CoverageFrom
}).annotations({ identifier: "AgentPagesResponse" })

// ---------------------------------------------------------------------------
// Agent dashboard (docs/decisions.md)
// ---------------------------------------------------------------------------

export const AgentFilters = Schema.Struct({
  bot: Schema.NullOr(Schema.String).annotations({ description: "The bot filter, null when absent" }),
  vendor: Schema.NullOr(Schema.String).annotations({ description: "The vendor filter, null when absent" }),
  kind: Schema.NullOr(AgentKindLiteral).annotations({ description: "The kind filter, null when absent" })
}).annotations({ identifier: "AgentFilters", description: "The crawler filters applied" })

export const AgentKpis = Schema.Struct({
  hits: Count("Crawler hits in the range"),
  pages: Count("Distinct paths fetched"),
  bots: Count("Distinct bots seen"),
  error_rate: Num("Hits with status >= 400 / hits (0..1; 0 without hits)")
}).annotations({ identifier: "AgentKpis" })

export const AgentTrendPoint = Schema.Struct({
  date: DateOnly,
  hits: Count("Crawler hits of the day"),
  by_kind: Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
    description: "Crawler kind to hits of the day (kinds with hits only)"
  })
}).annotations({ identifier: "AgentTrendPoint" })

export const BotBreakdown = Schema.Struct({
  bot: Str("Bot name"),
  vendor: Str("The company operating the bot"),
  kind: AgentKindLiteral,
  hits: Count("Hits")
}).annotations({ identifier: "BotBreakdown" })

export const VendorBreakdown = Schema.Struct({
  vendor: Str("Vendor or platform"),
  hits: Count("Hits of all its bots")
}).annotations({ identifier: "VendorBreakdown" })

export const KindBreakdown = Schema.Struct({
  kind: AgentKindLiteral,
  hits: Count("Hits")
}).annotations({ identifier: "KindBreakdown" })

export const StatusBreakdown = Schema.Struct({
  status: Schema.NullOr(Schema.Int).annotations({
    description: "HTTP status code; null when the status is unknown (drain sentinel -1 or not reported)"
  }),
  hits: Count("Hits")
}).annotations({ identifier: "StatusBreakdown" })

export const VerificationBreakdown = Schema.Struct({
  verification: Schema.Literal("verified", "spoofed", "unverified"),
  hits: Count("Hits")
}).annotations({ identifier: "VerificationBreakdown" })

export const AgentBreakdowns = Schema.Struct({
  by_bot: Schema.Array(BotBreakdown).annotations({ description: "Most hits first" }),
  by_vendor: Schema.Array(VendorBreakdown).annotations({ description: "Most hits first" }),
  by_kind: Schema.Array(KindBreakdown).annotations({ description: "Most hits first" }),
  by_status: Schema.Array(StatusBreakdown).annotations({ description: "Most hits first" }),
  by_verification: Schema.Array(VerificationBreakdown).annotations({
    description: "verified, spoofed, unverified, in that order, zeros included"
  })
}).annotations({ identifier: "AgentBreakdowns" })

export const TrackingTag = Schema.Struct({
  site_id: Schema.UUID.annotations({ description: "The brand's public site id" }),
  snippet: Str("HTML of the JavaScript tag to paste into the site")
}).annotations({ identifier: "TrackingTag" })

export const AgentsResponse = Schema.Struct({
  range: RangeEcho,
  filters: AgentFilters,
  kpis: AgentKpis,
  trend: Schema.Array(AgentTrendPoint).annotations({ description: "One point per day of the range, oldest first" }),
  breakdowns: AgentBreakdowns,
  top_pages: Schema.Array(CrawledPage).annotations({ description: "The most crawled paths, most hits first" }),
  tag: TrackingTag,
  retention_limited: RetentionLimited,
  coverage_from: CoverageFrom,
  ranges_snapshot: DateOnly.annotations({
    description: "Date of the operators' IP range snapshot the verdicts are checked against (docs/verification.md)"
  })
}).annotations({ identifier: "AgentsResponse" })

// ---------------------------------------------------------------------------
// The bots of one crawled page (docs/agents.md)
// ---------------------------------------------------------------------------

const VerificationMethod = Schema.Literal("ip_ranges", "reverse_dns", "web_bot_auth")

export const PageBot = Schema.Struct({
  bot: Str("Bot name"),
  vendor: Str("The company operating the bot"),
  kind: AgentKindLiteral,
  hits: Count("Matching hits of this bot on the page: verified + spoofed + unverified"),
  errors: Count("Those hits with status >= 400"),
  verified: Count("Hits whose verdict is verified (docs/verification.md)"),
  spoofed: Count("Hits whose verdict is spoofed: the operator publishes a method and the check failed"),
  unverified: Count("Hits whose verdict is unverified: no client IP, or no method published"),
  methods: Schema.Array(VerificationMethod).annotations({
    description:
      "Verification methods the bot's operator publishes in the range snapshot in use; empty: its hits can only be unverified"
  }),
  last_seen: DateTime.annotations({ description: "Time of the bot's latest matching hit on the page" })
}).annotations({ identifier: "PageBot" })

export const PageBotsResponse = Schema.Struct({
  brand_slug: Str("The brand"),
  range: RangeEcho,
  path: Str("The page, in its stored form (what the pages list shows)"),
  filters: Schema.Struct({
    ...AgentFilters.fields,
    verification: Schema.NullOr(Schema.Literal("verified", "spoofed", "unverified")).annotations({
      description: "The verification filter, null when absent"
    })
  }).annotations({ description: "The crawler filters applied" }),
  hits: Count("Matching crawler hits on the page: the hits of this path in GET /brands/{slug}/agents/pages under the same filters"),
  errors: Count("Those hits with status >= 400"),
  last_seen: Schema.NullOr(DateTime).annotations({ description: "Time of the latest matching hit; null without hits" }),
  by_verification: Schema.Array(VerificationBreakdown).annotations({
    description: "Hits on the page by verdict: verified, spoofed, unverified, in that order, zeros included"
  }),
  bots: Schema.Array(PageBot).annotations({ description: "Every bot that fetched the page, most hits first, then name" }),
  retention_limited: RetentionLimited,
  coverage_from: CoverageFrom,
  ranges_snapshot: DateOnly.annotations({
    description: "Date of the operators' IP range snapshot the verdicts are checked against (docs/verification.md)"
  })
}).annotations({ identifier: "PageBotsResponse" })

// ---------------------------------------------------------------------------
// Search performance (docs/agents.md)
// ---------------------------------------------------------------------------

const funnelFields = {
  search_crawls: Count("search_crawler hits (pages indexed for AI search)"),
  agent_fetches: Count("browsing_agent hits (pages fetched live while answering)"),
  referrals: Count("AI referrals (visitors arriving from an answer engine)")
}

export const SearchFunnel = Schema.Struct(funnelFields).annotations({
  identifier: "SearchFunnel",
  description: "The AI search funnel: crawled, fetched while answering, visited"
})

export const SearchPerformanceDay = Schema.Struct({
  date: DateOnly,
  ...funnelFields,
  by_engine: Schema.Record({ key: Schema.String, value: SearchFunnel }).annotations({
    description: "Engine slug to that engine's funnel of the day (engines with activity only)"
  })
}).annotations({ identifier: "SearchPerformanceDay" })

export const SearchPerformanceEngine = Schema.Struct({
  engine: Str("Engine slug; crawler hits count for the engine of the bot's vendor"),
  ...funnelFields
}).annotations({ identifier: "SearchPerformanceEngine" })

export const PageCount = Schema.Struct({
  path: Str("Request path without the query string"),
  count: Count("Hits or referrals on this path")
}).annotations({ identifier: "PageCount" })

export const SearchPerformanceResponse = Schema.Struct({
  brand_slug: Str("The brand"),
  range: RangeEcho,
  from: DateOnly.annotations({ description: "First day of the range" }),
  to: DateOnly.annotations({ description: "Last day of the range, today UTC" }),
  totals: SearchFunnel,
  trend: Schema.Array(SearchPerformanceDay).annotations({
    description: "One point per day of the range, oldest first"
  }),
  engines: Schema.Array(SearchPerformanceEngine).annotations({
    description: "Funnel per engine over the range, most referrals first"
  }),
  top_pages: Schema.Struct({
    search_crawls: Schema.Array(PageCount).annotations({ description: "Paths with the most search_crawler hits" }),
    agent_fetches: Schema.Array(PageCount).annotations({ description: "Paths with the most browsing_agent hits" }),
    referrals: Schema.Array(PageCount).annotations({ description: "Landing paths with the most AI referrals" })
  }).annotations({ description: "Top paths by each funnel stage" }),
  retention_limited: RetentionLimited,
  coverage_from: CoverageFrom
}).annotations({ identifier: "SearchPerformanceResponse" })

// ---------------------------------------------------------------------------
// Attribution (docs/agents.md)
// ---------------------------------------------------------------------------

export const ReferralEngine = Schema.Struct({
  engine: Str("Engine slug of the referrer"),
  referrals: Count("AI referrals from this engine"),
  share: Num("referrals / all AI referrals in the range (0..1)")
}).annotations({ identifier: "ReferralEngine" })

export const LandingPage = Schema.Struct({
  path: Str("Landing path without the query string"),
  referrals: Count("AI referrals landing on this path"),
  by_engine: Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
    description: "Engine slug to referrals landing on this path"
  })
}).annotations({ identifier: "LandingPage" })

export const VendorRatio = Schema.Struct({
  vendor: Str("Crawler vendor"),
  engines: Schema.Array(Schema.String).annotations({ description: "Engine slugs operated by this vendor" }),
  crawler_hits: Count("Crawler hits of this vendor's bots"),
  referrals: Count("AI referrals from this vendor's engines"),
  crawl_to_referral_ratio: Schema.NullOr(Schema.Number).annotations({
    description: "crawler_hits / referrals; null when there are no referrals"
  })
}).annotations({ identifier: "VendorRatio" })

export const AttributionDay = Schema.Struct({
  date: DateOnly,
  referrals: Count("AI referrals of the day"),
  by_engine: Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
    description: "Engine slug to referrals of the day"
  })
}).annotations({ identifier: "AttributionDay" })

export const AttributionResponse = Schema.Struct({
  brand_slug: Str("The brand"),
  range: RangeEcho,
  from: DateOnly.annotations({ description: "First day of the range" }),
  to: DateOnly.annotations({ description: "Last day of the range, today UTC" }),
  total_referrals: Count("AI referrals in the range"),
  trend: Schema.Array(AttributionDay).annotations({ description: "One point per day of the range, oldest first" }),
  engines: Schema.Array(ReferralEngine).annotations({ description: "Referrals by engine, most first" }),
  landing_pages: Schema.Array(LandingPage).annotations({ description: "Referrals by landing path, most first" }),
  vendors: Schema.Array(VendorRatio).annotations({
    description: "Crawl-to-referral ratio per vendor, vendors with crawler hits or referrals"
  })
}).annotations({ identifier: "AttributionResponse" })

// ---------------------------------------------------------------------------
// Group
// ---------------------------------------------------------------------------

export class AgentsGroup extends HttpApiGroup.make("agents")
  .annotate(OpenApi.Description, "AI crawlers and agents fetching the brand's site: totals, trend, pages, search performance, referrals")
  .add(
    HttpApiEndpoint.get("dashboard", "/brands/:slug/agents")
      .annotate(McpTool, { name: "get_brand_agents" })
      .setPath(SlugPath)
      .setUrlParams(AgentsUrlParams)
      .addSuccess(AgentsResponse)
      .annotate(OpenApi.Summary, "AI crawler dashboard of a brand's site")
      .annotate(OpenApi.Description, AgentsDescriptions.dashboard)
  )
  .add(
    HttpApiEndpoint.get("pages", "/brands/:slug/agents/pages")
      .annotate(McpTool, { name: "get_brand_agent_pages", defaultLimit: 25 })
      .setPath(SlugPath)
      .setUrlParams(AgentPagesUrlParams)
      .addSuccess(AgentPagesResponse)
      .annotate(OpenApi.Summary, "Every URL fetched by AI bots, one page of results")
      .annotate(OpenApi.Description, AgentsDescriptions.pages)
  )
  .add(
    HttpApiEndpoint.get("pageBots", "/brands/:slug/agents/pages/bots")
      .annotate(McpTool, { name: "get_brand_agent_page_bots" })
      .setPath(SlugPath)
      .setUrlParams(PageBotsUrlParams)
      .addSuccess(PageBotsResponse)
      .annotate(OpenApi.Summary, "The bots that fetched one page, each with its hits by verification verdict")
      .annotate(OpenApi.Description, AgentsDescriptions.pageBots)
  )
  .add(
    HttpApiEndpoint.get("searchPerformance", "/brands/:slug/search-performance")
      .annotate(McpTool, { name: "get_brand_search_performance" })
      .setPath(SlugPath)
      .setUrlParams(SearchPerformanceUrlParams)
      .addSuccess(SearchPerformanceResponse)
      .annotate(OpenApi.Summary, "AI search funnel per day and engine: crawled, fetched while answering, visited")
      .annotate(OpenApi.Description, AgentsDescriptions.searchPerformance)
  )
  .add(
    HttpApiEndpoint.get("attribution", "/brands/:slug/attribution")
      .annotate(McpTool, { name: "get_brand_attribution" })
      .setPath(SlugPath)
      .setUrlParams(AttributionUrlParams)
      .addSuccess(AttributionResponse)
      .annotate(OpenApi.Summary, "AI referrals by engine and landing page, crawl-to-referral ratio per vendor")
      .annotate(OpenApi.Description, AgentsDescriptions.attribution)
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .addError(NotFoundError)
  .middleware(BearerAuth)
{}
