import { HttpApiBuilder, HttpRouter } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import { Accounts, AccountsLive } from "./accounts/Accounts.js"
import { ApiKeys, ApiKeysLive } from "./accounts/ApiKeys.js"
import { AuthHttpLive, BearerAuthLive, MeHttpLive, SessionAuthLive } from "./accounts/Http.js"
import { KeyHashing, KeyHashingLive } from "./accounts/KeyHashing.js"
import { ApiKeysRepo, ApiKeysRepoLive } from "./accounts/KeysRepo.js"
import { PasswordHasher, PasswordHasherLive } from "./accounts/Passwords.js"
import { AccountsRepo, AccountsRepoLive } from "./accounts/Repo.js"
import { Agents, AgentsServiceLive } from "./agents/Agents.js"
import { AgentsConfig, AgentsConfigLive } from "./agents/Config.js"
import { AgentsLive } from "./agents/Http.js"
import { AgentsRepo, AgentsRepoLive } from "./agents/Repo.js"
import { RetentionLive } from "./agents/Retention.js"
import { SpanRollerLive } from "./agents/SpanRoller.js"
import { TagLive } from "./agents/Tag.js"
import { ServerApi } from "./api.js"
import { Brands, BrandsLive } from "./brands/Brands.js"
import { BrandsHttpLive, DashboardBrandsHttpLive } from "./brands/Http.js"
import { BrandsRepo, BrandsRepoLive } from "./brands/Repo.js"
import { Classifier, ClassifierLive } from "./catalog/Classifier.js"
import { IngestConfig, IngestConfigLive } from "./ingestion/Config.js"
import { FastlyChallengeLive } from "./ingestion/FastlyChallenge.js"
import { DrainDecoder, DrainDecoderLive } from "./ingestion/DrainDecoder.js"
import { HitsRepo, HitsRepoLive } from "./ingestion/HitsRepo.js"
import { IngestionLive } from "./ingestion/Http.js"
import { Ingestion, IngestionServiceLive, SpoolReplayLive } from "./ingestion/Ingestion.js"
import { Quota, QuotaLive } from "./ingestion/Quota.js"
import { Spool, SpoolLive } from "./ingestion/Spool.js"
import { AppConfig } from "./platform/Config.js"
import type { Database } from "./platform/Sql.js"
import { edgeMiddleware } from "./platform/Edge.js"
import { HardeningLive, Lifecycle, LifecycleLive } from "./platform/Hardening.js"
import { RateLimiter, RateLimiterLive } from "./platform/RateLimiter.js"
import { SystemHttpLive } from "./platform/SystemHttp.js"
import { CitationsLive, IndustryLive, VisibilityLive } from "./visibility/Http.js"
import { WebLive } from "./web/Http.js"
import { McpLive } from "./mcp/Server.js"
import { Analysis, AnalysisLive } from "./visibility/Analysis.js"
import { Observations, ObservationsLive } from "./visibility/Observations.js"
import { ObservationsHttpLive } from "./visibility/ObservationsHttp.js"
import { ObservationsRepo, ObservationsRepoLive } from "./visibility/ObservationsRepo.js"
import { Visibility, VisibilityConfig, VisibilityConfigLive, VisibilityLive as VisibilityServiceLive } from "./visibility/Visibility.js"
import { VisibilityRepo, VisibilityRepoLive } from "./visibility/VisibilityRepo.js"
import { VerificationRepo, VerificationRepoLive } from "./verification/Repo.js"
import { Resolver, ResolverLive } from "./verification/Resolver.js"
import { Verification, VerificationConfig, VerificationConfigLive, VerificationLive } from "./verification/Verification.js"
import { Alerts, AlertsLive } from "./webhooks/Alerts.js"
import { WebhooksConfig, WebhooksConfigLive } from "./webhooks/Config.js"
import { WebhooksHttpLive } from "./webhooks/Http.js"
import { WebhooksRepo, WebhooksRepoLive } from "./webhooks/Repo.js"
import { AlertChecksLive, SenderLive } from "./webhooks/Sender.js"
import { AddressResolver, AddressResolverLive } from "./webhooks/Ssrf.js"
import { Webhooks, WebhooksLive } from "./webhooks/Webhooks.js"

/**
 * The whole wiring, in one place. Infrastructure (config, database) comes from outside,
 * so the server, the CLI and the tests share everything else.
 */

/** One repository per aggregate; Live ones talk SQL, tests may pass in-memory fakes instead. */
export type Repositories = AccountsRepo | ApiKeysRepo | BrandsRepo | ObservationsRepo | HitsRepo | Quota | VisibilityRepo
  | AgentsRepo | VerificationRepo | WebhooksRepo
export const RepositoriesLive: Layer.Layer<Repositories, never, SqlClient.SqlClient> = Layer.mergeAll(
  AccountsRepoLive,
  ApiKeysRepoLive,
  BrandsRepoLive,
  ObservationsRepoLive,
  VisibilityRepoLive,
  HitsRepoLive,
  QuotaLive,
  AgentsRepoLive,
  VerificationRepoLive,
  WebhooksRepoLive
)

export type Services = Accounts | ApiKeys | Brands | KeyHashing | PasswordHasher | Analysis | Observations | IngestionServices
  | Visibility | VisibilityConfig | Agents | AgentsConfig | RateLimiter | Lifecycle | Verification | VerificationConfig | Resolver
  | Alerts | Webhooks | WebhooksConfig | AddressResolver
export type Infrastructure = AppConfig | Database

/** Domain services over the repositories. */
export const makeServices = <E, R>(options: {
  readonly repositories: Layer.Layer<Repositories, E, R>
  readonly passwords?: Layer.Layer<PasswordHasher>
  /** Ingestion limits and spool directory; default from the environment (IngestConfigLive). */
  readonly ingestConfig?: Layer.Layer<IngestConfig, never, AppConfig>
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
}) => {
  // Alerts (docs/webhooks.md) are computed where ingestion and observations store their facts.
  const base = Layer.mergeAll(KeyHashingLive, options.passwords ?? PasswordHasherLive, AlertsLive)
  // Observations (answer observations in) builds on Brands and the Analysis service.
  const core = ObservationsLive.pipe(
    Layer.provideMerge(Layer.mergeAll(AccountsLive, ApiKeysLive, BrandsLive, AnalysisLive)),
    Layer.provideMerge(base),
    Layer.provideMerge(options.repositories)
  )
  // The visibility reads (issue 7) over their repository, the brands and observations repositories.
  const visibility = VisibilityServiceLive.pipe(
    Layer.provideMerge(options.visibilityConfig ?? VisibilityConfigLive),
    Layer.provide(options.repositories)
  )
  // Verified agents (docs/verification.md): verdicts at ingestion, range reloads, the background pass.
  const verification = VerificationLive.pipe(
    Layer.provideMerge(Layer.mergeAll(options.resolver ?? ResolverLive, options.verificationConfig ?? VerificationConfigLive)),
    Layer.provide(ClassifierLive),
    Layer.provide(options.repositories)
  )
  // Agent analytics (issue 5): the reads over the rollups, and the retention fiber.
  const agents = Layer.merge(RetentionLive, SpanRollerLive).pipe(
    Layer.provideMerge(AgentsServiceLive),
    Layer.provideMerge(options.agentsConfig ?? AgentsConfigLive),
    Layer.provide(core),
    Layer.provide(verification)
  )
  const services = ingestionServices(options.ingestConfig ?? IngestConfigLive).pipe(
    Layer.provideMerge(verification),
    Layer.provideMerge(core),
    Layer.provideMerge(visibility),
    Layer.provideMerge(agents),
    // Rate limits (in process, or Redis with REDIS_URL) and the in-flight count of graceful shutdown (issue 9).
    Layer.provideMerge(Layer.mergeAll(RateLimiterLive, LifecycleLive))
  )
  // Webhook endpoints, the background sender and the alert checks (docs/webhooks.md).
  return Layer.mergeAll(SenderLive, AlertChecksLive).pipe(
    Layer.provideMerge(WebhooksLive),
    Layer.provideMerge(Layer.mergeAll(options.webhooksConfig ?? WebhooksConfigLive, options.addressResolver ?? AddressResolverLive)),
    Layer.provideMerge(services)
  )
}

/**
 * Server-log ingestion (issue 4): the catalog's classifier, the drain decoder, the spool and
 * its background replay (a fiber living as long as the services), the ingestion service.
 */
export type IngestionServices = Ingestion | Classifier | DrainDecoder | Spool | IngestConfig
const ingestionServices = <R>(config: Layer.Layer<IngestConfig, never, R>) =>
  SpoolReplayLive.pipe(
    Layer.provideMerge(IngestionServiceLive),
    Layer.provideMerge(Layer.mergeAll(ClassifierLive, DrainDecoderLive, SpoolLive)),
    Layer.provideMerge(config)
  )

/** The HttpApi of the server: every group's handlers and both auth middlewares. */
export const HttpGroupsLive = HttpApiBuilder.api(ServerApi).pipe(
  Layer.provide([
    BrandsHttpLive,
    VisibilityLive,
    AgentsLive,
    IngestionLive,
    CitationsLive,
    IndustryLive,
    AuthHttpLive,
    MeHttpLive,
    DashboardBrandsHttpLive,
    ObservationsHttpLive,
    SystemHttpLive,
    WebhooksHttpLive
  ]),
  Layer.provide([BearerAuthLive, SessionAuthLive])
)

/**
 * The served application: HttpApi groups behind the edge middleware (JSON errors, Origin
 * check). No span exporter is configured, and building spans nobody reads doubled the
 * client cost of every SQL query (bench/brands-rps.ts), so the tracer is off.
 */
export const ApiLive = Layer.mergeAll(
  HttpGroupsLive,
  // The web application, the API reference and the MCP server at /mcp, on the same router (issue 8).
  Layer.mergeAll(WebLive, McpLive).pipe(Layer.provide(HttpGroupsLive)),
  // GET /tag.js and POST /tag/collect, outside the authenticated APIs (issue 5).
  TagLive,
  // GET /.well-known/fastly/logging/challenge: Fastly's check before it streams logs (docs/ingestion.md).
  FastlyChallengeLive,
  HttpApiBuilder.middleware(edgeMiddleware),
  // Request ids, rate limits, security headers, request log and metrics; GET /metrics, /readyz (issue 9).
  HardeningLive,
  // Path parameters up to 1,000 characters (the router's default is 100): a competitor {name} may
  // have 200 (docs/decisions.md); longer values reach the schema, which answers 400 naming it.
  HttpRouter.setRouterConfig({ maxParamLength: 1000 }),
  Layer.setTracerEnabled(false)
)
