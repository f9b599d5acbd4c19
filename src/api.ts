import { HttpApi, OpenApi } from "@effect/platform"
import { AuthGroup, MeGroup } from "./accounts/Api.js"
import { ActionsGroup } from "./actions/Api.js"
import { AgentsGroup } from "./agents/Api.js"
import { BrandsGroup, DashboardBrandsGroup } from "./brands/Api.js"
import { IngestionGroup } from "./ingestion/Api.js"
import { documentEdge } from "./platform/EdgeOpenApi.js"
import { PayloadTooLargeError, RateLimitedError, ServiceUnavailableError } from "./platform/HttpErrors.js"
import { SystemGroup } from "./platform/SystemApi.js"
import { CitationsGroup, IndustryGroup, VisibilityGroup } from "./visibility/Api.js"
import { ObservationsGroup } from "./observations/Api.js"
import { TwinsGroup } from "./web/TwinsApi.js"
import { CatalogGroup } from "./verification/Api.js"
import { WebhooksGroup } from "./webhooks/Api.js"

export const API_VERSION = "2026.05.23"

/** Both documents: the paths are absolute, so the server is the one that serves the document. */
const servers = [{ url: "/", description: "This server (every path below is absolute)" }]
// No open-source licence: the SPDX form for a licence of its own.
const license = { name: "Proprietary", identifier: "LicenseRef-Proprietary" }

/** The customer API: 22 paths under /api/public/v1, bearer API keys only. */
export class PublicApi extends HttpApi.make("public")
  .add(BrandsGroup)
  .add(VisibilityGroup)
  .add(AgentsGroup)
  .add(IngestionGroup)
  .add(CitationsGroup)
  .add(IndustryGroup)
  .add(ActionsGroup)
  // Answered by the edge on any route (docs/operations.md): the rate limits, the body cap, a database
  // outage or a shutdown.
  .addError(RateLimitedError)
  .addError(PayloadTooLargeError)
  .addError(ServiceUnavailableError)
  .prefix("/api/public/v1")
  .annotateContext(
    OpenApi.annotations({
      title: "Brand AI-Visibility Customer API",
      version: API_VERSION,
      servers,
      license,
      transform: documentEdge({ limited: () => true, csrf: false }),
      description:
        "How AI answer engines talk about your brands and competitors, and which AI crawlers and agents fetch your pages. " +
        "Every route is scoped to the account that owns the API key."
    })
  )
{}

/** Built once: the public API's OpenAPI 3.1 document (spec version label in info.version). */
export const publicOpenApi = OpenApi.fromApi(PublicApi)

/** The dashboard surface (docs/decisions.md): cookie sessions, used by the web application. */
export class DashboardApi extends HttpApi.make("dashboard")
  .add(AuthGroup)
  .add(MeGroup)
  .add(DashboardBrandsGroup)
  .add(ObservationsGroup)
  .add(WebhooksGroup)
  .add(TwinsGroup)
  .add(CatalogGroup)
  .addError(PayloadTooLargeError)
  .addError(ServiceUnavailableError)
  .prefix("/api/v1")
  .annotateContext(
    OpenApi.annotations({
      title: "Brand AI-Visibility Dashboard API",
      version: API_VERSION,
      servers,
      license,
      // Sign-up and sign-in are rate limited (their 429 is declared with them); changes pass the CSRF guard.
      transform: documentEdge({ limited: (id) => id === "auth.signup" || id === "auth.login", csrf: true }),
      description:
        "The surface of the web application: sign-up and sign-in, the account and its API keys, brands, competitors and " +
        "prompts, imports, webhooks, the catalog of AI agents with their verification methods, and cookie twins of the " +
        "public reads. Every route but sign-up and sign-in needs the session cookie; state-changing requests need a " +
        "same-origin Origin header."
    })
  )
{}

/** Built once: the dashboard surface's own document (the web application's routes, cookie sessions). */
export const dashboardOpenApi = OpenApi.fromApi(DashboardApi)

/** Everything one server process serves. */
export class ServerApi extends HttpApi.make("server")
  .addHttpApi(PublicApi)
  .addHttpApi(DashboardApi)
  .add(SystemGroup)
{}
