import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Context } from "effect"
import { SessionAuth } from "../accounts/Api.js"
import { ActionsResponse, ActionsUrlParams } from "../actions/Api.js"
import {
  AgentPagesResponse,
  AgentPagesUrlParams,
  AgentsResponse,
  AgentsUrlParams,
  AttributionResponse,
  AttributionUrlParams,
  PageBotsResponse,
  PageBotsUrlParams,
  SearchPerformanceResponse,
  SearchPerformanceUrlParams
} from "../agents/Api.js"
import { SlugPath } from "../brands/Api.js"
import { BadRequestError, NotFoundError, UnauthorizedError } from "../platform/HttpErrors.js"
import {
  CitationsResponse,
  CitationsUrlParams,
  CompetitorCitationsResponse,
  CompetitorCitationsUrlParams,
  CompetitorNamePath,
  CompetitorPromptsResponse,
  CompetitorPromptsUrlParams,
  FanoutsResponse,
  FanoutsUrlParams,
  GapResponse,
  GapUrlParams,
  IndustryMetricsResponse,
  IndustryRankingResponse,
  IndustryRankingUrlParams,
  IndustryMetricsUrlParams,
  MentionsResponse,
  MentionsUrlParams,
  ModelResponse,
  ModelUrlParams,
  PortfolioResponse,
  PortfolioUrlParams,
  PromptsResponse,
  SnapshotsResponse,
  SnapshotsUrlParams,
  TopicsResponse
} from "../visibility/Api.js"

/**
 * The dashboard twins of the public reads the web application draws: GET /api/v1/me/brands/{slug}/...
 * and, for the account-wide reads, GET /api/v1/me/<public path>, with the session cookie instead of an API key. Each answers exactly what its public endpoint answers
 * the session's account (src/web/Twins.ts runs that endpoint in process), so the parameters and
 * responses are the public endpoint's own schemas; `brand` of /industry/metrics and /model is the slug.
 */
/**
 * The public read a twin runs, as its path under /api/public/v1: `{slug}` and `{name}` stand for the twin's
 * own path parameters (a name is passed on percent-encoded, for the public endpoint to validate), and a
 * query parameter after `?` is set by the twin (the brand selector of /industry/metrics and /model).
 * src/web/Twins.ts reads it from the endpoint: the one place a twin names its public endpoint.
 */
export class TwinTarget extends Context.Tag("TwinTarget")<TwinTarget, string>() {}

const twin = <Name extends string>(name: Name, suffix: string, publicPath: string) =>
  HttpApiEndpoint.get(name, `/me/brands/:slug/${suffix}`)
    .setPath(SlugPath)
    .annotate(OpenApi.Summary, `GET /api/public/v1${publicPath} for the signed-in account's brand`)
    .annotate(TwinTarget, publicPath)

/** A twin of an account-wide read (no brand in its path): the public path under /me. */
const accountTwin = <Name extends string>(name: Name, publicPath: string) =>
  HttpApiEndpoint.get(name, `/me${publicPath}`)
    .annotate(OpenApi.Summary, `GET /api/public/v1${publicPath.replace(":name", "{name}")} for the signed-in account`)
    .annotate(TwinTarget, publicPath.replace(":name", "{name}"))

export class TwinsGroup extends HttpApiGroup.make("twins")
  .annotate(OpenApi.Description, "The public reads for the signed-in account, with the session cookie instead of an API key")
  .add(twin("agents", "agents", "/brands/{slug}/agents").setUrlParams(AgentsUrlParams).addSuccess(AgentsResponse))
  .add(twin("agentsPages", "agents/pages", "/brands/{slug}/agents/pages").setUrlParams(AgentPagesUrlParams).addSuccess(AgentPagesResponse))
  .add(
    twin("agentsPageBots", "agents/pages/bots", "/brands/{slug}/agents/pages/bots").setUrlParams(PageBotsUrlParams).addSuccess(PageBotsResponse)
  )
  .add(
    twin("searchPerformance", "search-performance", "/brands/{slug}/search-performance")
      .setUrlParams(SearchPerformanceUrlParams)
      .addSuccess(SearchPerformanceResponse)
  )
  .add(twin("attribution", "attribution", "/brands/{slug}/attribution").setUrlParams(AttributionUrlParams).addSuccess(AttributionResponse))
  .add(twin("snapshots", "snapshots", "/brands/{slug}/snapshots").setUrlParams(SnapshotsUrlParams).addSuccess(SnapshotsResponse))
  .add(twin("mentions", "mentions", "/brands/{slug}/mentions").setUrlParams(MentionsUrlParams).addSuccess(MentionsResponse))
  .add(twin("prompts", "prompts", "/brands/{slug}/prompts").addSuccess(PromptsResponse))
  .add(
    twin("industryMetrics", "industry-metrics", "/industry/metrics?brand={slug}")
      .setUrlParams(IndustryMetricsUrlParams.omit("brand"))
      .addSuccess(IndustryMetricsResponse)
  )
  .add(twin("model", "model", "/model?brand={slug}").setUrlParams(ModelUrlParams.omit("brand")).addSuccess(ModelResponse))
  .add(twin("actions", "actions", "/brands/{slug}/actions").setUrlParams(ActionsUrlParams).addSuccess(ActionsResponse))
  .add(accountTwin("portfolio", "/portfolio").setUrlParams(PortfolioUrlParams).addSuccess(PortfolioResponse))
  .add(accountTwin("citations", "/citations").setUrlParams(CitationsUrlParams).addSuccess(CitationsResponse))
  .add(accountTwin("fanouts", "/citations/fanouts").setUrlParams(FanoutsUrlParams).addSuccess(FanoutsResponse))
  .add(accountTwin("topics", "/topics").addSuccess(TopicsResponse))
  .add(accountTwin("industryRanking", "/industry/ranking").setUrlParams(IndustryRankingUrlParams).addSuccess(IndustryRankingResponse))
  .add(accountTwin("industryGap", "/industry/gap").setUrlParams(GapUrlParams).addSuccess(GapResponse))
  .add(
    accountTwin("competitorCitations", "/industry/competitors/:name/citations")
      .setPath(CompetitorNamePath)
      .setUrlParams(CompetitorCitationsUrlParams)
      .addSuccess(CompetitorCitationsResponse)
  )
  .add(
    accountTwin("competitorPrompts", "/industry/competitors/:name/prompts")
      .setPath(CompetitorNamePath)
      .setUrlParams(CompetitorPromptsUrlParams)
      .addSuccess(CompetitorPromptsResponse)
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .addError(NotFoundError)
  .middleware(SessionAuth)
{}
