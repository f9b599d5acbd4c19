import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SessionAuth } from "../accounts/Api.js"
import { UnauthorizedError } from "../platform/HttpErrors.js"
import { AgentKindLiteral, Count, DateOnly, Str } from "../platform/Schemas.js"

/**
 * Dashboard surface: the agent catalog with each agent's verification methods (docs/verification.md,
 * "Where it shows"), read by the web application's catalog page.
 */

export const VerificationMethod = Schema.Literal("ip_ranges", "reverse_dns", "web_bot_auth").annotations({
  identifier: "VerificationMethod",
  description:
    "How a hit claiming the agent can be checked: ip_ranges (its client IP is in a range file the operator publishes " +
    "for it), reverse_dns (forward-confirmed reverse DNS under a host name the operator documents), web_bot_auth " +
    "(an HTTP message signature of a key in the operator's key directory)"
})

export const CatalogAgent = Schema.Struct({
  bot: Str("The agent's name in the catalog, as reports and the bot filter spell it (GPTBot, ChatGPT-User...)"),
  vendor: Str("The operator behind the agent, as reports and the vendor filter spell it"),
  kind: AgentKindLiteral.annotations({
    description: "training_crawler, search_crawler, browsing_agent, agentic_browser or mcp_client (docs/catalog.md)"
  }),
  docs_url: Schema.NullOr(Schema.String).annotations({
    description: "The operator's page about the agent, or the best public description of it; null when the catalog records none"
  }),
  robots_only: Schema.Boolean.annotations({
    description: "A robots.txt token only: the operator never sends it as a User-Agent, so no hit is ever counted under it"
  }),
  verification_methods: Schema.Array(VerificationMethod).annotations({
    description:
      "The methods the operator publishes for this agent, with the range snapshot in use (what `cli classify` prints). " +
      "Empty: its hits can only be unverified"
  })
}).annotations({ identifier: "CatalogAgent" })

export const CatalogResponse = Schema.Struct({
  version: Str("Version of the catalog the server classifies with"),
  ranges_snapshot: DateOnly.annotations({
    description: "Date of the operators' IP range snapshot the methods and verdicts are read from (docs/verification.md)"
  }),
  agents: Schema.Array(CatalogAgent).annotations({ description: "Every agent of the catalog, in catalog order (grouped by operator)" }),
  count: Count("Number of agents")
}).annotations({ identifier: "CatalogResponse" })

export class CatalogGroup extends HttpApiGroup.make("catalog")
  .annotate(OpenApi.Description, "The catalog of AI agents with their verification methods")
  .add(
    HttpApiEndpoint.get("list", "/catalog")
      .addSuccess(CatalogResponse)
      .annotate(OpenApi.Summary, "The AI crawlers and agents the server recognises, with their verification methods")
      .annotate(
        OpenApi.Description,
        "Every agent of the catalog: its name, operator, kind and documentation page, and how its operator lets a hit be " +
          "verified (published IP ranges, reverse DNS, Web Bot Auth), read from the range snapshot in use. The same for " +
          "every account."
      )
  )
  .addError(UnauthorizedError)
  .middleware(SessionAuth)
{}
