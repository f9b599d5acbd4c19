import { WorkspaceFillLive } from "../platform/WorkspaceFill.js"
import { HttpApiBuilder, HttpMiddleware, HttpRouter } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { AccountsLive } from "../accounts/Accounts.js"
import { ApiKeysLive } from "../accounts/ApiKeys.js"
import { AuthHttpLive, BearerAuthLive, MeHttpLive, SessionAuthLive } from "../accounts/Http.js"
import { KeyHashingLive } from "../accounts/KeyHashing.js"
import { ApiKeysRepo, ApiKeysRepoLive } from "../accounts/KeysRepo.js"
import { PasswordHasher, PasswordHasherLive } from "../accounts/Passwords.js"
import { AccountsRepo, AccountsRepoLive } from "../accounts/Repo.js"
import { ActionsLive } from "../actions/Actions.js"
import { ActionsHttpLive } from "../actions/Http.js"
import { AgentsLive } from "../agents/Agents.js"
import { AgentsConfig, AgentsConfigLive } from "../agents/Config.js"
import { AgentsHttpLive } from "../agents/Http.js"
import { AgentsRepo, AgentsRepoLive } from "../agents/Repo.js"
import { RollupAggregatorScheduled } from "../agents/Aggregator.js"
import { RetentionLive } from "../agents/Retention.js"
import { SpanRollerLive } from "../agents/SpanRoller.js"
import { TagLive } from "../agents/Tag.js"
import { ServerApi } from "../api.js"
import { BrandsLive } from "../brands/Brands.js"
import { brandsListPrecomputed, BrandsHttpLive, DashboardBrandsHttpLive } from "../brands/Http.js"
import { BrandsRepo, BrandsRepoLive } from "../brands/Repo.js"
import { ClassifierLive } from "../catalog/Classifier.js"
import { IngestionConfig, IngestionConfigLive } from "../ingestion/Config.js"
import { FastlyChallengeLive } from "../ingestion/FastlyChallenge.js"
import { DrainDecoderLive } from "../ingestion/DrainDecoder.js"
import { HitsRepo, HitsRepoLive } from "../ingestion/HitsRepo.js"
import { IngestionHttpLive } from "../ingestion/Http.js"
import { IngestionLive, SpoolReplayLive } from "../ingestion/Ingestion.js"
import { QuotaRepo, QuotaRepoLive } from "../ingestion/QuotaRepo.js"
import { SpoolLive } from "../ingestion/Spool.js"
import { AppConfig, AppConfigLive } from "../platform/Config.js"
import { MigratedSqlLive } from "../platform/Migrations.js"
import type { BackgroundSql, Database, CustomPlanSql } from "../platform/Sql.js"
import { InvalidationsLive } from "../platform/Invalidations.js"
import { apiErrorTags } from "../platform/Edge.js"
import { LifecycleLive } from "../platform/Lifecycle.js"
import { edgeMiddleware } from "../platform/Middleware.js"
import { PrecomputedRoutes, routeKey } from "../platform/PrecomputedRoutes.js"
import { ReadinessChecks } from "../platform/Readiness.js"
import { RequestLogLive } from "../platform/RequestLog.js"
import { spoolReadiness } from "../ingestion/Readiness.js"
import { OpsRoutesLive } from "./OpsRoutes.js"
import { RateLimiterLive } from "../platform/RateLimiter.js"
import { PartitionMaintenanceLive, TimePartitions, TimePartitionsLive } from "../platform/TimePartitions.js"
import { SystemHttpLive } from "./SystemHttp.js"
import { CitationsHttpLive, IndustryHttpLive, VisibilityHttpLive } from "../visibility/Http.js"
import { WebLive } from "../web/Http.js"
import { TwinsHttpLive } from "../web/Twins.js"
import { McpLive } from "../mcp/Server.js"
import { AnalysisLive } from "../observations/Analysis.js"
import { ObservationsLive } from "../observations/Observations.js"
import { ObservationsHttpLive } from "../observations/Http.js"
import { ObservationsRepo, ObservationsRepoLive } from "../observations/Repo.js"
import { VisibilityConfig, VisibilityConfigLive, VisibilityLive } from "../visibility/Visibility.js"
import { VisibilityRepo, VisibilityRepoLive } from "../visibility/Repo.js"
import { VerificationRepo, VerificationRepoLive } from "../verification/Repo.js"
import { Resolver, ResolverLive } from "../verification/Resolver.js"
import { VerificationConfig, VerificationConfigLive, VerificationLive } from "../verification/Verification.js"
import { AgentCatalogLive } from "../verification/AgentCatalog.js"
import { CatalogHttpLive } from "../verification/Http.js"
import { AlertsLive } from "../webhooks/Alerts.js"
import { WebhooksConfig, WebhooksConfigLive } from "../webhooks/Config.js"
import { WebhooksHttpLive } from "../webhooks/Http.js"
import { WebhooksRepo, WebhooksRepoLive } from "../webhooks/Repo.js"
import { AlertChecksLive, SenderLive } from "../webhooks/Sender.js"
import { AddressResolver, AddressResolverLive } from "../webhooks/Ssrf.js"
import { WebhooksLive } from "../webhooks/Webhooks.js"

/**
 * The whole wiring, in one place. Infrastructure (config, database) comes from outside,
 * so the server, the CLI and the tests share everything else.
 */

/** One repository per aggregate; Live ones talk SQL, tests may pass in-memory fakes instead. */
export type Repositories = AccountsRepo | ApiKeysRepo | BrandsRepo | ObservationsRepo | HitsRepo | QuotaRepo | VisibilityRepo
  | AgentsRepo | VerificationRepo | WebhooksRepo | TimePartitions
export const RepositoriesLive: Layer.Layer<Repositories, never, SqlClient.SqlClient | BackgroundSql | CustomPlanSql> = Layer.mergeAll(
  AccountsRepoLive,
  ApiKeysRepoLive,
  BrandsRepoLive,
  ObservationsRepoLive,
  VisibilityRepoLive,
  HitsRepoLive,
  QuotaRepoLive,
  AgentsRepoLive,
  VerificationRepoLive,
  WebhooksRepoLive,
  TimePartitionsLive
)

export type Infrastructure = AppConfig | Database

/** What the domains add to /readyz and /metrics (src/app/OpsRoutes.ts): ingestion's spool. */
const ReadinessChecksLive = Layer.effect(ReadinessChecks, Effect.all([spoolReadiness])).pipe(Layer.provide(SpoolLive))

/**
 * Every service, background fiber and in-process state of the app, one line each. Each `XLive` declares the
 * services it needs where it is defined (its layer with `Layer.provide` of their live layers), so this list
 * has no order. A layer several services need (Brands, Accounts, Invalidations' LISTEN connection, the
 * caches) is one constant, built once per app: layers are memoized by reference within a build. What is
 * left open is provided by `makeServices`: repositories, settings, the password hasher and resolvers (the
 * tests' fakes), the database and AppConfig.
 */
export const ServicesLive = Layer.mergeAll(
  KeyHashingLive,
  AccountsLive,
  ApiKeysLive,
  BrandsLive,
  ClassifierLive,
  VerificationLive,
  AgentCatalogLive,
  DrainDecoderLive,
  SpoolLive,
  IngestionLive,
  SpoolReplayLive,
  VisibilityLive,
  AlertsLive,
  WebhooksLive,
  SenderLive,
  AlertChecksLive,
  AnalysisLive,
  ObservationsLive,
  AgentsLive,
  RetentionLive,
  SpanRollerLive,
  PartitionMaintenanceLive,
  RollupAggregatorScheduled,
  ActionsLive,
  ReadinessChecksLive,
  RateLimiterLive,
  LifecycleLive,
  RequestLogLive,
  InvalidationsLive,
  WorkspaceFillLive
).pipe(
  // Ingestion reports its stores and deliveries through IngestionReports, which the webhooks' alerts
  // implement (a lower folder cannot import a higher one, docs/architecture.md "Layers").
  Layer.provide(AlertsLive)
)

/** ServicesLive over the repositories and settings: the live ones unless a test passes others. */
export const makeServices = <E, R>(options: {
  readonly repositories: Layer.Layer<Repositories, E, R>
  readonly passwords?: Layer.Layer<PasswordHasher>
  /** Ingestion limits and spool directory; default from the environment (IngestionConfigLive). */
  readonly ingestionConfig?: Layer.Layer<IngestionConfig, never, AppConfig>
  /** Visibility reads (the fan-out group cap); default from the environment (VisibilityConfigLive). */
  readonly visibilityConfig?: Layer.Layer<VisibilityConfig>
  /** Agent analytics (retention, the tag); default from the environment (AgentsConfigLive). */
  readonly agentsConfig?: Layer.Layer<AgentsConfig>
  /** Verified agents: DNS and its limits; default the system resolver and the environment (docs/verification.md). */
  readonly resolver?: Layer.Layer<Resolver>
  readonly verificationConfig?: Layer.Layer<VerificationConfig>
  /** Webhook delivery and alert settings; default from the environment (WebhooksConfigLive). */
  readonly webhooksConfig?: Layer.Layer<WebhooksConfig>
  /** The webhook SSRF guard's name resolution; default the system's (tests pass a fake). */
  readonly addressResolver?: Layer.Layer<AddressResolver>
}) =>
  ServicesLive.pipe(
    Layer.provideMerge(Layer.mergeAll(
      options.passwords ?? PasswordHasherLive,
      options.ingestionConfig ?? IngestionConfigLive,
      options.visibilityConfig ?? VisibilityConfigLive,
      options.agentsConfig ?? AgentsConfigLive,
      options.resolver ?? ResolverLive,
      options.verificationConfig ?? VerificationConfigLive,
      options.webhooksConfig ?? WebhooksConfigLive,
      options.addressResolver ?? AddressResolverLive
    )),
    Layer.provideMerge(options.repositories)
  )

/** The HttpApi of the server: every group's handlers and both auth middlewares. */
export const HttpGroupsLive = HttpApiBuilder.api(ServerApi).pipe(
  Layer.provide([
    BrandsHttpLive,
    VisibilityHttpLive,
    AgentsHttpLive,
    IngestionHttpLive,
    CitationsHttpLive,
    IndustryHttpLive,
    AuthHttpLive,
    MeHttpLive,
    DashboardBrandsHttpLive,
    ObservationsHttpLive,
    SystemHttpLive,
    TwinsHttpLive,
    WebhooksHttpLive,
    CatalogHttpLive,
    ActionsHttpLive
  ]),
  Layer.provide([BearerAuthLive, SessionAuthLive])
)

/** The reads the edge answers before the router (src/platform/PrecomputedRoutes.ts): GET /brands. */
const PrecomputedRoutesLive = Layer.effect(
  PrecomputedRoutes,
  Effect.map(Effect.all([brandsListPrecomputed]), (routes) => new Map(routes.map((route) => [routeKey(route.method, route.path), route])))
)

/**
 * The served application: HttpApi groups behind the edge middleware (JSON errors, Origin
 * check). No span exporter is configured, and building spans nobody reads doubled the
 * client cost of every SQL query (bench/brands-rps.ts), so the tracer is off.
 */
export const ApiLive = Layer.mergeAll(
  HttpGroupsLive,
  // The web application, the API reference and the MCP server at /mcp, on the same router.
  Layer.mergeAll(WebLive, McpLive).pipe(Layer.provide(HttpGroupsLive)),
  // GET /tag.js and POST /tag/collect, outside the authenticated APIs.
  TagLive,
  // GET /.well-known/fastly/logging/challenge: Fastly's check before it streams logs (docs/ingestion.md).
  FastlyChallengeLive,
  // The edge (src/platform/Middleware.ts): request ids, limits, the body cap, CSRF, JSON errors for
  // whatever is not a declared API error (the list read from the definition), security headers,
  // the request log and metrics.
  edgeMiddleware(apiErrorTags(ServerApi)).pipe(Layer.provide(PrecomputedRoutesLive)),
  // GET /readyz and GET /metrics.
  OpsRoutesLive,
  // Path parameters up to 1,000 characters (the router's default is 100): a competitor {name} may
  // have 200 (docs/decisions.md); longer values reach the schema, which answers 400 naming it.
  HttpRouter.setRouterConfig({ maxParamLength: 1000 }),
  Layer.setTracerEnabled(false),
  // The platform's tracing middleware still ran per request with the tracer off: a URL parsed,
  // the headers copied for redaction, trace headers read and a no-op span, for nothing exported.
  // The route template is caught by the edge's stand-in span (RouteCapture), not by that span.
  Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)
)

/** The services on the configured database (DATABASE_URL or the embedded one), migrated: the CLI's. */
export const cliServicesLive = () => {
  const database = MigratedSqlLive.pipe(Layer.provide(AppConfigLive))
  return makeServices({ repositories: RepositoriesLive }).pipe(
    Layer.provideMerge(RepositoriesLive),
    Layer.provideMerge(database),
    Layer.provideMerge(AppConfigLive)
  )
}
