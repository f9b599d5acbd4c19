import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { closedSet, McpTool } from "../platform/McpTool.js"
import { Schema } from "effect"
import { BearerAuth } from "../accounts/Api.js"
import { MonitoredPrompt, SlugPath } from "../brands/Api.js"
import { BadRequestError, NotFoundError, UnauthorizedError } from "../platform/HttpErrors.js"
import { Count, DateOnly, DateTime, ENGINE_SLUGS, Language, Num, RangeEcho, RangeParam, Region, Slug, Str } from "../platform/Schemas.js"
import { CitationsDescriptions, IndustryDescriptions, VisibilityDescriptions } from "./ApiDescriptions.js"

/**
 * Read endpoints over answer observations (docs/visibility.md).
 * Every figure is defined in docs/visibility.md; the descriptions below repeat the definition so the
 * OpenAPI document explains each field on its own.
 */

// ---------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------

/** A 95% interval `[low, high]` (docs/visibility.md, "Intervals"); null when its sample is too small. */
/** What every interval means, in the words users read (docs/visibility.md, "Intervals"). */
export const INTERVAL_MEANING =
  "[low, high]: how far the figure moves from one asking to the next on the same monitored prompts and engines " +
  "(the engines' answer-to-answer variation), 95% of the time; it says nothing about how other prompts would fare. " +
  "Intervals near 0 or 1 are lopsided: quote both ends, not a ± half-width."
const Ci95 = (description: string) =>
  Schema.NullOr(Schema.Tuple(Schema.Number, Schema.Number)).annotations({ description: `${description}. ${INTERVAL_MEANING}` })
const Significant = Schema.Boolean.annotations({
  description: "true when the 95% interval of the delta excludes 0 (a change beyond sampling noise); false when it has none"
})

/** Query string with only `range` (default 30d). */
export const RangeUrlParams = Schema.Struct({ range: RangeParam })

/** docs/visibility.md: `{avg_rank, top1_share, top3_share, mentions}` of a set of the brand's mentions. */
export const RankStats = Schema.Struct({
  avg_rank: Num("Mean rank of the brand's mentions (1 = named first); 0 when there are no mentions"),
  top1_share: Num("Share (0..1) of the brand's mentions at rank 1; 0 when there are no mentions"),
  top3_share: Num("Share (0..1) of the brand's mentions at rank 1 to 3; 0 when there are no mentions"),
  mentions: Count("Observations that mention the brand")
}).annotations({ identifier: "RankStats", description: "Rank statistics of the brand's mentions" })

/** Citation domains bucket (docs/decisions.md). */
export const CitationBucket = Schema.Literal("owned", "competitor", "ugc", "reference", "earned").annotations({
  description:
    "owned: the brand's domain or a subdomain; competitor: a tracked competitor's domain; " +
    "ugc: forums, social and video sites; reference: encyclopedias and dictionaries; earned: every other domain"
})

/** A cited domain of /citations; also the competitor-citations entry. */
export const CitationDomain = Schema.Struct({
  domain: Str("Host of the cited URLs, without www."),
  citations: Count("Citation URLs on this domain in the population"),
  share: Num("citations / all citation URLs in the population (0..1)"),
  bucket: CitationBucket
}).annotations({ identifier: "CitationDomain" })

const SentimentShares = Schema.Struct({
  pos: Num("Share (0..1) of the entity's mentions labelled positive"),
  neu: Num("Share (0..1) of the entity's mentions labelled neutral"),
  neg: Num("Share (0..1) of the entity's mentions labelled negative")
}).annotations({ description: "Shares of the entity's mentions by sentiment label; 0 each when it has no mentions" })

/** One row of a share-of-voice ranking (/industry/metrics; also /industry/ranking). */
export const IndustryRankingRow = Schema.Struct({
  name: Str("Entity name: the brand or a tracked competitor"),
  mentions: Count("Observations mentioning the entity"),
  share: Num("Share of voice: the entity's mentions / the sum of mentions over all entities (0..1)"),
  delta: Num("share minus the share in the previous period of the same length"),
  is_own: Schema.Boolean.annotations({ description: "true for the brand itself" }),
  is_pinned: Schema.Boolean.annotations({ description: "true for a competitor pinned by the account" }),
  domain: Str("The entity's domain"),
  sentiment: SentimentShares,
  share_ci95: Ci95(
    "95% interval of share (linearised ratio estimator over the population's observations; when its variance is 0, " +
      "the Wilson interval over the observations naming at least one entity), 4 decimals; " +
      "null with fewer than 2 observations or no mention at all"
  ),
  delta_ci95: Ci95("95% interval of delta (delta ± 1.959964·sqrt(var + var_previous)), 4 decimals; null when either share has none"),
  significant: Significant
}).annotations({ identifier: "IndustryRankingRow" })

// ---------------------------------------------------------------------------
// docs/visibility.md snapshots
// ---------------------------------------------------------------------------

export const SnapshotsUrlParams = RangeUrlParams

export const Snapshot = Schema.Struct({
  date: DateOnly,
  citation_rate: Num(
    "Observations with at least one citation on the brand's domain / total_responses (0..1; 0 without observations)"
  ),
  brand_mentions: Count("Observations of the day that mention the brand"),
  total_responses: Count("Observations of the day"),
  per_engine: Schema.Record({ key: Schema.String, value: Schema.Number }).annotations({
    description: "Engine slug to mention rate on that engine: brand_mentions / total_responses (0..1)"
  }),
  sentiment_avg: Num("Mean sentiment score in [-1, 1] of the brand's mentions; 0 without mentions"),
  sentiment_pos: Num("Share (0..1) of the brand's mentions labelled positive"),
  sentiment_neu: Num("Share (0..1) of the brand's mentions labelled neutral"),
  sentiment_neg: Num("Share (0..1) of the brand's mentions labelled negative"),
  ranking: RankStats,
  ranking_per_engine: Schema.Record({ key: Schema.String, value: RankStats }).annotations({
    description: "Engine slug to the rank statistics of the brand's mentions on that engine"
  }),
  sentiment_per_competitor: Schema.Record({ key: Schema.String, value: Schema.Number }).annotations({
    description: "Competitor name to the mean sentiment score in [-1, 1] of its mentions (competitors with mentions only)"
  }),
  mention_rate: Num("brand_mentions / total_responses (0..1)"),
  mention_rate_ci95: Ci95("Wilson 95% interval of mention_rate (n = total_responses), 4 decimals"),
  citation_rate_ci95: Ci95("Wilson 95% interval of citation_rate (n = total_responses), 4 decimals"),
  per_engine_n: Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
    description: "Engine slug to the day's observations on that engine (the n of per_engine)"
  }),
  per_engine_ci95: Schema.Record({ key: Schema.String, value: Ci95("Wilson 95% interval, 4 decimals") }).annotations({
    description: "Engine slug to the Wilson 95% interval of per_engine on that engine, 4 decimals"
  })
}).annotations({ identifier: "Snapshot", description: "One day of a brand's answer observations (UTC)" })

export const SnapshotsResponse = Schema.Struct({
  brand_slug: Str("The brand"),
  range: RangeEcho,
  snapshots: Schema.Array(Snapshot).annotations({ description: "One entry per day with observations, oldest first" }),
  count: Count("Snapshots in this response")
}).annotations({ identifier: "SnapshotsResponse" })

// ---------------------------------------------------------------------------
// docs/visibility.md mentions
// ---------------------------------------------------------------------------

export const MENTION_SENTIMENT_FILTERS = ["", "pos", "neu", "neg"] as const

export const MentionsUrlParams = Schema.Struct({
  sentiment: Schema.optional(
    Schema.Literal(...MENTION_SENTIMENT_FILTERS).annotations({
      description: "Sentiment filter: pos, neu or neg; empty or absent = all mentions",
      message: () => ({ message: "must be one of pos, neu, neg or empty", override: true })
    })
  ),
  region: Schema.optional(
    Region.annotations({ description: "ISO-3166-1 alpha-2 region; default the brand's primary region" })
  ),
  language: Schema.optional(
    Language.annotations({
      description: "ISO-639-1 language; default the language of the region (the primary language without region)"
    })
  )
})

export const Mention = Schema.Struct({
  id: Str("Mention id"),
  engine: Str("Engine slug of the answer"),
  prompt: Str("The monitored prompt the engine answered"),
  response_snippet: Str("The sentence holding the brand's first occurrence (at most 300 characters)"),
  rank: Count("1 + the number of mentioned entities named earlier in the answer"),
  sentiment: Schema.Literal("positive", "neutral", "negative").annotations({
    description: "positive when the score > 0.1, negative when < -0.1, else neutral"
  }),
  cited_url: Schema.NullOr(Schema.String).annotations({
    description: "The answer's first citation on the brand's domain, null when none"
  }),
  seen_at: DateTime
}).annotations({ identifier: "Mention" })

export const MentionsResponse = Schema.Struct({
  brand_slug: Str("The brand"),
  region: Str("Region read (ISO-3166-1 alpha-2): the parameter, else the brand's primary region"),
  language: Str("Language read (ISO-639-1): the parameter, else the region's language"),
  mentions: Schema.Array(Mention).annotations({
    description: "Newest first, the last 30 days, at most 500"
  }),
  count: Count("Mentions in this response")
}).annotations({ identifier: "MentionsResponse" })

// ---------------------------------------------------------------------------
// docs/visibility.md monitored prompts
// ---------------------------------------------------------------------------

export const PromptsResponse = Schema.Struct({
  prompts: Schema.Array(MonitoredPrompt),
  count: Count("Prompts in this response (this brand's monitored prompts)"),
  used_total: Count("Monitored prompts over all brands of the account"),
  limit: Count("Monitored prompts the account's plan allows")
}).annotations({ identifier: "PromptsResponse" })

// ---------------------------------------------------------------------------
// docs/visibility.md portfolio
// ---------------------------------------------------------------------------

export const PortfolioUrlParams = RangeUrlParams

export const PortfolioEntry = Schema.Struct({
  slug: Str("Brand slug"),
  name: Str("Brand name"),
  ai_presence_score: Num("100 x mention rate (brand_mentions / total_responses) over the range, one decimal"),
  delta_7d: Num("Score over the last 7 days minus the score over the 7 days before"),
  top_engine: Str("Engine slug with the highest mention rate in the range (ties: alphabetical); empty when no data"),
  top_competitor: Str("Competitor with the most mentions in the range (ties: alphabetical); empty when none"),
  n: Count("Observations of the brand in the range (the sample of ai_presence_score)"),
  ai_presence_score_ci95: Ci95("Wilson 95% interval of the mention rate x 100, 2 decimals; null when n = 0")
}).annotations({ identifier: "PortfolioEntry" })

export const PortfolioResponse = Schema.Struct({
  brands: Schema.Array(PortfolioEntry).annotations({ description: "Every brand of the account" }),
  range: RangeEcho,
  region: Str("Regions read: all")
}).annotations({ identifier: "PortfolioResponse" })

// ---------------------------------------------------------------------------
// docs/visibility.md citations, 2.5 fan-outs
// ---------------------------------------------------------------------------

/** The brand selector of the reads that default to the primary brand or to the whole workspace: a slug. */
const brandSelector = (description: string) => Schema.optional(Slug.annotations({ description }))

/** Exact topic of a monitored prompt, as the topic filter of /industry/ranking. */
const topicFilter = (description: string) => Schema.optional(Schema.String.annotations({ description }))

export const CitationsUrlParams = Schema.Struct({
  range: RangeParam,
  brand: brandSelector("Brand slug: only that brand's answers (buckets relative to it); absent = every brand of the workspace")
})

export const CitationsResponse = Schema.Struct({
  domains: Schema.Array(CitationDomain).annotations({ description: "Cited domains, most cited first" }),
  total_citations: Count(
    "All answer citation URLs in the workspace (the brand's, with brand) over the range (fan-out citations excluded)"
  ),
  range: RangeEcho
}).annotations({ identifier: "CitationsResponse" })

export const FanoutsUrlParams = RangeUrlParams

export const Fanout = Schema.Struct({
  index: Count("Position of the sub-question in the engine's decomposition (1 = first)"),
  sub_question: Str("A sub-question the engine searched for"),
  citations: Schema.Array(Schema.String).annotations({ description: "URLs cited for this sub-question" })
}).annotations({ identifier: "Fanout" })

export const FanoutGroup = Schema.Struct({
  prompt_id: Count("Integer id of the monitored prompt"),
  prompt_text: Str("The monitored prompt"),
  brand_slug: Str("The prompt's brand"),
  brand_name: Str("The prompt's brand name"),
  engine: Str("Engine slug"),
  snapshot_date: DateOnly,
  fanouts: Schema.Array(Fanout)
}).annotations({
  identifier: "FanoutGroup",
  description: "One tracked prompt on one engine: its latest decomposition into sub-questions in the range"
})

export const FanoutsResponse = Schema.Struct({
  range_days: Count("Days in the range (7, 30 or 90)"),
  prompts: Schema.Array(FanoutGroup),
  truncated_groups: Schema.Boolean.annotations({
    description: "true when the response hit the group cap: narrow the range to see the rest"
  })
}).annotations({ identifier: "FanoutsResponse" })

// ---------------------------------------------------------------------------
// docs/visibility.md engine performance
// ---------------------------------------------------------------------------

export const ModelUrlParams = Schema.Struct({
  range: RangeParam,
  brand: Schema.optional(Slug.annotations({ description: "Brand slug; default the newest added brand" }))
})

export const EnginePerformance = Schema.Struct({
  engine: Str("Engine slug"),
  score: Num("100 x mention rate on this engine over the range"),
  delta: Num("score minus the same figure over the previous period of the same length"),
  n: Count("Observations in the range on this engine"),
  score_ci95: Ci95("Wilson 95% interval of the mention rate x 100, 2 decimals; null when n = 0"),
  delta_ci95: Ci95(
    "Newcombe 95% interval of the difference of the two mention rates x 100, 2 decimals; null when either period has no observation"
  ),
  significant: Significant
}).annotations({ identifier: "EnginePerformance" })

export const ModelResponse = Schema.Struct({
  engines: Schema.Array(EnginePerformance),
  range: RangeEcho
}).annotations({ identifier: "ModelResponse" })

// ---------------------------------------------------------------------------
// docs/visibility.md topics
// ---------------------------------------------------------------------------

export const TopicTheme = Schema.Struct({
  theme: Str("A monitored prompt topic"),
  count: Count("Monitored prompts with this topic"),
  tier: Schema.Literal(1, 2, 3).annotations({
    description: "1, 2 or 3: top, middle or bottom third of themes by count"
  })
}).annotations({ identifier: "TopicTheme" })

export const TopicsResponse = Schema.Struct({
  themes: Schema.Array(TopicTheme),
  total_keywords: Count(
    "Distinct lower-cased words (3+ letters, stop words removed) over all monitored prompts of the account"
  )
}).annotations({ identifier: "TopicsResponse" })

// ---------------------------------------------------------------------------
// docs/visibility.md industry metrics
// ---------------------------------------------------------------------------

export const IndustryMetricsUrlParams = Schema.Struct({
  range: RangeParam,
  engine: Schema.optional(
    Schema.String.annotations({
      description:
        "Engine slug, matched exactly (chatgpt, perplexity, gemini, claude, copilot, grok, deepseek, ai_overview, ai_mode); " +
        "any other value returns an empty result, not an error",
      ...closedSet(ENGINE_SLUGS)
    })
  ),
  brand: Schema.optional(
    Slug.annotations({ description: "Brand slug; default the account's primary brand (the earliest added)" })
  ),
  region: Schema.optional(
    Region.annotations({ description: "ISO-3166-1 alpha-2 region; default the brand's primary region" })
  ),
  language: Schema.optional(
    Language.annotations({
      description: "ISO-639-1 language; default the language of the region (the primary language without region)"
    })
  )
})

export const IndustryTimeSeriesPoint = Schema.Struct({
  date: DateOnly,
  brand_mentions: Count("Observations of the day mentioning the brand"),
  total_responses: Count("Observations of the day"),
  per_competitor: Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
    description: "Competitor name to observations of the day mentioning it"
  })
}).annotations({ identifier: "IndustryTimeSeriesPoint" })

export const IndustryMetricsResponse = Schema.Struct({
  brand_slug: Str("The brand"),
  brand_name: Str("The brand's name"),
  range: RangeEcho,
  from: DateOnly.annotations({ description: "First day of the range (YYYY-MM-DD)" }),
  to: DateOnly.annotations({ description: "Last day of the range, today UTC (YYYY-MM-DD)" }),
  engine: Str("The engine filter, or all"),
  region: Str("Region read (ISO-3166-1 alpha-2): the parameter, else the brand's primary region"),
  language: Str("Language read (ISO-639-1): the parameter, else the region's language (the brand's primary one by default)"),
  last_refreshed: DateTime.annotations({
    description: "Time of the newest observation read; the brand's added_at when there is none"
  }),
  ranking: Schema.Array(IndustryRankingRow).annotations({
    description:
      "One row per entity (the brand and its competitors), by mentions, most first (ties: alphabetical); " +
      "empty when the range has no observations"
  }),
  ranking_count: Count("Rows in ranking"),
  time_series: Schema.Array(IndustryTimeSeriesPoint).annotations({
    description: "One point per day with observations, oldest first"
  }),
  time_series_count: Count("Points in time_series"),
  own: Schema.Struct({
    total_mentions: Count("Observations mentioning the brand"),
    total_responses: Count("Observations in the range"),
    avg_position: Num("Mean rank of the brand's mentions; 0 when there are no mentions"),
    n: Count("Observations in the population (the sample of mention_rate)"),
    mention_rate: Num("total_mentions / total_responses (0..1; 0 without observations)"),
    mention_rate_ci95: Ci95("Wilson 95% interval of mention_rate, 4 decimals; null when n = 0")
  }).annotations({ description: "The brand's own totals over the range" }),
  tracked_competitors: Schema.Array(Schema.String).annotations({ description: "Names of the brand's competitors" }),
  methodology: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "How the figures are computed: figure or setting name to its definition or value"
  })
}).annotations({ identifier: "IndustryMetricsResponse" })

// ---------------------------------------------------------------------------
// Competitor citations and prompts, gap, topic ranking
// ---------------------------------------------------------------------------

export const CompetitorNamePath = Schema.Struct({
  name: Schema.String.pipe(
    Schema.minLength(1),
    Schema.maxLength(200),
    Schema.annotations({
      description: "A tracked competitor of the brand parameter, else of the primary brand (case-insensitive)",
      message: () => ({ message: "must be a non-empty string of at most 200 characters", override: true })
    })
  )
})

/** The brand whose competitor is read: absent = the primary brand (as before the parameter existed). */
const competitorBrand = brandSelector("Brand slug whose tracked competitor this is; default the account's primary brand (the earliest added)")

export const CompetitorCitationsUrlParams = Schema.Struct({ range: RangeParam, brand: competitorBrand })

export const CompetitorCitationsResponse = Schema.Struct({
  competitor: Str("The competitor's name as tracked"),
  range: RangeEcho,
  domains: Schema.Array(CitationDomain).annotations({
    description: "Domains cited in the primary brand's observations that mention the competitor, most cited first"
  }),
  total_citations: Count("Citation URLs in those observations")
}).annotations({ identifier: "CompetitorCitationsResponse" })

export const CompetitorPromptsUrlParams = Schema.Struct({ range: RangeParam, brand: competitorBrand })

export const CompetitorPrompt = Schema.Struct({
  prompt_id: Count("Integer id of the monitored prompt (the same id as in fan-out groups)"),
  prompt: Str("The monitored prompt"),
  topic: Str("The prompt's topic"),
  appearances: Count("Observations of this prompt that mention the competitor"),
  engines: Schema.Array(Schema.String).annotations({ description: "Engine slugs those observations came from" }),
  avg_rank: Num("The competitor's mean rank in those observations"),
  brand_mentioned: Count("How many of those observations also mention the brand")
}).annotations({ identifier: "CompetitorPrompt" })

export const CompetitorPromptsResponse = Schema.Struct({
  competitor: Str("The competitor's name as tracked"),
  range: RangeEcho,
  prompts: Schema.Array(CompetitorPrompt).annotations({
    description: "Monitored prompts where the competitor appeared, most appearances first"
  }),
  count: Count("Prompts in this response")
}).annotations({ identifier: "CompetitorPromptsResponse" })

export const GapUrlParams = Schema.Struct({
  range: RangeParam,
  region: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^([A-Za-z]{2})?$/),
      Schema.annotations({
        description: "ISO-3166-1 alpha-2 region, case-insensitive; empty or absent = all regions",
        message: () => "must be an ISO-3166-1 alpha-2 code or empty"
      })
    )
  ),
  topic: topicFilter(
    "Exact topic of a monitored prompt of the brand: only answers to prompts with this topic; empty or absent = all"
  ),
  brand: brandSelector("Brand slug; default the account's primary brand (the earliest added)")
})

export const GapDomain = Schema.Struct({
  domain: Str("A domain cited alongside competitors but never alongside the brand"),
  bucket: CitationBucket,
  opportunity: Count("Observations mentioning at least one competitor that cite this domain"),
  competitors: Schema.Array(Schema.String).annotations({ description: "Competitor names seen with this domain" })
}).annotations({ identifier: "GapDomain" })

export const GapResponse = Schema.Struct({
  range: RangeEcho,
  region: Str("The region filter (upper case), or all"),
  domains: Schema.Array(GapDomain).annotations({
    description: "Ranked by opportunity, then by the number of distinct competitors"
  }),
  count: Count("Domains in this response")
}).annotations({ identifier: "GapResponse" })

/** A region filter whose absence means every region (the gap, the ranking): alpha-2, any case, or empty. */
const allRegionsFilter = Schema.String.pipe(
  Schema.pattern(/^([A-Za-z]{2})?$/),
  Schema.annotations({
    description: "ISO-3166-1 alpha-2 region, case-insensitive; empty or absent = all regions",
    message: () => "must be an ISO-3166-1 alpha-2 code or empty"
  })
)

/** An engine filter: exact slug, empty or absent = every engine. */
const engineFilter = Schema.String.annotations({
  description:
    "Engine slug, matched exactly (chatgpt, perplexity, gemini, claude, copilot, grok, deepseek, ai_overview, ai_mode); " +
    "empty or absent = every engine; any other value returns an empty result, not an error",
  ...closedSet(ENGINE_SLUGS)
})

export const IndustryRankingUrlParams = Schema.Struct({
  range: RangeParam,
  topic: Schema.optional(
    Schema.String.annotations({
      description: "Exact topic of a monitored prompt: only observations of prompts with this topic; absent = all"
    })
  ),
  brand: brandSelector("Brand slug; default the account's primary brand (the earliest added)"),
  engine: Schema.optional(engineFilter),
  region: Schema.optional(allRegionsFilter)
})

export const IndustryRankingResponse = Schema.Struct({
  brand_slug: Str("The brand read: the brand parameter, else the primary brand"),
  brand_name: Str("That brand's name"),
  range: RangeEcho,
  topic: Schema.NullOr(Schema.String).annotations({ description: "The topic filter, null when absent" }),
  engine: Str("The engine filter, or all"),
  region: Str("The region filter (upper case), or all: every region and language"),
  total_responses: Count("Observations in the population (the brand's, filtered by topic, engine and region)"),
  ranking: Schema.Array(IndustryRankingRow).annotations({
    description: "Share of voice: one row per entity (the brand and its competitors), most mentions first"
  }),
  ranking_count: Count("Rows in ranking")
}).annotations({ identifier: "IndustryRankingResponse" })

// ---------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------

export class VisibilityGroup extends HttpApiGroup.make("visibility")
  .annotate(OpenApi.Description, "How answer engines talk about each brand: snapshots, mentions, prompts, portfolio, model, topics")
  .add(
    HttpApiEndpoint.get("snapshots", "/brands/:slug/snapshots")
      .annotate(McpTool, { name: "get_brand_snapshots", page: { field: "snapshots", limit: 31 } })
      .setPath(SlugPath)
      .setUrlParams(SnapshotsUrlParams)
      .addSuccess(SnapshotsResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Daily visibility snapshots of a brand")
      .annotate(OpenApi.Description, VisibilityDescriptions.snapshots)
  )
  .add(
    HttpApiEndpoint.get("mentions", "/brands/:slug/mentions")
      .annotate(McpTool, { name: "get_brand_mentions", page: { field: "mentions", limit: 20 } })
      .setPath(SlugPath)
      .setUrlParams(MentionsUrlParams)
      .addSuccess(MentionsResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Recent mentions of a brand in AI answers")
      .annotate(OpenApi.Description, VisibilityDescriptions.mentions)
  )
  .add(
    HttpApiEndpoint.get("prompts", "/brands/:slug/prompts")
      .annotate(McpTool, { name: "get_brand_prompts", page: { field: "prompts", limit: 50 } })
      .setPath(SlugPath)
      .addSuccess(PromptsResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Monitored prompts of a brand")
      .annotate(OpenApi.Description, VisibilityDescriptions.prompts)
  )
  .add(
    HttpApiEndpoint.get("portfolio", "/portfolio")
      .annotate(McpTool, { name: "get_portfolio", page: { field: "brands", limit: 50 } })
      .setUrlParams(PortfolioUrlParams)
      .addSuccess(PortfolioResponse)
      .annotate(OpenApi.Summary, "AI presence score of every brand of the account")
      .annotate(OpenApi.Description, VisibilityDescriptions.portfolio)
  )
  .add(
    HttpApiEndpoint.get("model", "/model")
      .annotate(McpTool, { name: "get_engine_performance" })
      .setUrlParams(ModelUrlParams)
      .addSuccess(ModelResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Per-engine performance of one brand")
      .annotate(OpenApi.Description, VisibilityDescriptions.model)
  )
  .add(
    HttpApiEndpoint.get("topics", "/topics")
      .annotate(McpTool, { name: "get_topics", page: { field: "themes", limit: 50 } })
      .addSuccess(TopicsResponse)
      .annotate(OpenApi.Summary, "Topic themes of the account's monitored prompts")
      .annotate(OpenApi.Description, VisibilityDescriptions.topics)
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .middleware(BearerAuth)
{}

export class CitationsGroup extends HttpApiGroup.make("citations")
  .annotate(OpenApi.Description, "The sources answer engines cite, and the fan-out queries behind them")
  .add(
    HttpApiEndpoint.get("citations", "/citations")
      .annotate(McpTool, { name: "get_citations", page: { field: "domains", limit: 25 } })
      .setUrlParams(CitationsUrlParams)
      .addSuccess(CitationsResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Domains cited in AI answers across the workspace, or for one brand")
      .annotate(OpenApi.Description, CitationsDescriptions.citations)
  )
  .add(
    HttpApiEndpoint.get("fanouts", "/citations/fanouts")
      .annotate(McpTool, { name: "get_citation_fanouts", page: { field: "prompts", limit: 10 } })
      .setUrlParams(FanoutsUrlParams)
      .addSuccess(FanoutsResponse)
      .annotate(OpenApi.Summary, "Query fan-outs: sub-questions and their citations, across the workspace")
      .annotate(OpenApi.Description, CitationsDescriptions.fanouts)
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .middleware(BearerAuth)
{}

export class IndustryGroup extends HttpApiGroup.make("industry")
  .annotate(OpenApi.Description, "The brand against its competitors: metrics, their citations and prompts, gaps, ranking")
  .add(
    HttpApiEndpoint.get("metrics", "/industry/metrics")
      .annotate(McpTool, { name: "get_industry_metrics" })
      .setUrlParams(IndustryMetricsUrlParams)
      .addSuccess(IndustryMetricsResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Share of voice, trend and totals of a brand against its competitors")
      .annotate(OpenApi.Description, IndustryDescriptions.metrics)
  )
  .add(
    HttpApiEndpoint.get("competitorCitations", "/industry/competitors/:name/citations")
      .annotate(McpTool, { name: "get_competitor_citations", page: { field: "domains", limit: 25 } })
      .setPath(CompetitorNamePath)
      .setUrlParams(CompetitorCitationsUrlParams)
      .addSuccess(CompetitorCitationsResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Domains cited in answers that mention a competitor")
      .annotate(OpenApi.Description, IndustryDescriptions.competitorCitations)
  )
  .add(
    HttpApiEndpoint.get("competitorPrompts", "/industry/competitors/:name/prompts")
      .annotate(McpTool, { name: "get_competitor_prompts", page: { field: "prompts", limit: 25 } })
      .setPath(CompetitorNamePath)
      .setUrlParams(CompetitorPromptsUrlParams)
      .addSuccess(CompetitorPromptsResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Monitored prompts where a competitor appeared")
      .annotate(OpenApi.Description, IndustryDescriptions.competitorPrompts)
  )
  .add(
    HttpApiEndpoint.get("gap", "/industry/gap")
      .annotate(McpTool, { name: "get_industry_gap", page: { field: "domains", limit: 25 } })
      .setUrlParams(GapUrlParams)
      .addSuccess(GapResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Domains that cite competitors but not the brand, by opportunity")
      .annotate(OpenApi.Description, IndustryDescriptions.gap)
  )
  .add(
    HttpApiEndpoint.get("ranking", "/industry/ranking")
      .annotate(McpTool, { name: "get_industry_ranking" })
      .setUrlParams(IndustryRankingUrlParams)
      .addSuccess(IndustryRankingResponse)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Share-of-voice ranking, optionally for one topic")
      .annotate(OpenApi.Description, IndustryDescriptions.ranking)
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .middleware(BearerAuth)
{}
