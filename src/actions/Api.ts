import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { McpTool } from "../platform/McpTool.js"
import { Schema } from "effect"
import { BearerAuth } from "../accounts/Api.js"
import { SlugPath } from "../brands/Api.js"
import { BadRequestError, NotFoundError, UnauthorizedError } from "../platform/HttpErrors.js"
import { Count, Num, RangeEcho, RangeParam, Str } from "../platform/Schemas.js"

/**
 * What to fix first (docs/actions.md): actions derived by fixed rules from the crawler rollups and the
 * answer rollups, each naming its evidence in numbers the other endpoints report for the same range.
 */

export const ActionsUrlParams = Schema.Struct({ range: RangeParam })

const Title = Str("What to do, one sentence")
const Why = Str("The numbers behind it, one or two sentences")
const Link = Str("The web application's route (starts with #/) of the screen that shows the evidence")

const BotNames = Schema.Array(Schema.String)

export const FixCrawlerErrorsEvidence = Schema.Struct({
  path: Str("The stored path (no query string)"),
  error_hits: Count("Crawler hits on the path that answered 400..599 (the pages list's errors)"),
  hits: Count("Crawler hits on the path in the range (the pages list's hits)"),
  statuses: Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
    description: "Error hits per status code (\"404\": n)"
  }),
  bots: BotNames.annotations({ description: "Bots of the error hits, most error hits first, then by name" })
}).annotations({ identifier: "FixCrawlerErrorsEvidence" })

export const ServeLlmsTxtEvidence = Schema.Struct({
  hits: Count("Crawler hits on /llms.txt in the range, every one answered 404"),
  bots: BotNames.annotations({ description: "Bots that asked for it, most hits first, then by name" })
}).annotations({ identifier: "ServeLlmsTxtEvidence" })

export const BlockSpoofedEvidence = Schema.Struct({
  bot: Str("The bot name the requests claimed"),
  spoofed_hits: Count("Hits of the bot whose verdict is spoofed (GET /agents with verification=spoofed)"),
  hits: Count("Every hit of the bot in the range")
}).annotations({ identifier: "BlockSpoofedEvidence" })

export const EarnCitationsFromEvidence = Schema.Struct({
  domain: Str("A domain cited in answers that mention a competitor and never in answers that mention the brand"),
  answers: Count("The gap opportunity: answers mentioning a competitor that cite the domain"),
  competitors: Schema.Array(Schema.String).annotations({ description: "Competitors seen with the domain, by name" })
}).annotations({ identifier: "EarnCitationsFromEvidence" })

export const WinPromptEvidence = Schema.Struct({
  prompt: Str("The monitored prompt's text"),
  answers: Count("Answers to the prompt in the range, every region and engine"),
  brand_rate: Num("Answers mentioning the brand / answers (0..1, 4 decimals)"),
  competitor: Str("The competitor mentioned in the most answers (then by name)"),
  competitor_rate: Num("Answers mentioning that competitor / answers (0..1, 4 decimals)")
}).annotations({ identifier: "WinPromptEvidence" })

const action = <K extends string, E extends Schema.Schema.Any>(kind: K, evidence: E, description: string) =>
  Schema.Struct({ kind: Schema.Literal(kind), title: Title, why: Why, evidence, link: Link }).annotations({
    identifier: `Action_${kind}`,
    description
  })

export const FixCrawlerErrorsAction = action(
  "fix_crawler_errors",
  FixCrawlerErrorsEvidence,
  "A path with at least 10 crawler hits in the range, at least 20% of them answered 4xx or 5xx"
)
export const ServeLlmsTxtAction = action(
  "serve_llms_txt",
  ServeLlmsTxtEvidence,
  "Crawlers asked for /llms.txt in the range and every such hit answered 404"
)
export const BlockSpoofedAction = action(
  "block_spoofed",
  BlockSpoofedEvidence,
  "A bot with at least 20 hits in the range, at least 20% of them spoofed"
)
export const EarnCitationsFromAction = action(
  "earn_citations_from",
  EarnCitationsFromEvidence,
  "A domain of the brand's citation gap with an opportunity of at least 3 answers"
)
export const WinPromptAction = action(
  "win_prompt",
  WinPromptEvidence,
  "A monitored prompt with at least 5 answers where a competitor is named in at least 50% and the brand in at most 10%"
)

export const Action = Schema.Union(
  FixCrawlerErrorsAction,
  ServeLlmsTxtAction,
  BlockSpoofedAction,
  EarnCitationsFromAction,
  WinPromptAction
).annotations({ identifier: "Action" })
export type Action = typeof Action.Type

export const ActionsLookedAt = Schema.Struct({
  crawler_hits: Count("Crawler hits of the brand's site in the range (GET /agents kpis.hits)"),
  bots: Count("Distinct bots among them"),
  answers: Count("Answers to the brand's monitored prompts in the range, every region and engine"),
  prompts: Count("Monitored prompts with at least one answer in the range"),
  gap_domains: Count("Domains of the brand's citation gap in the range, every region")
}).annotations({ identifier: "ActionsLookedAt", description: "What the rules read, so that an empty list says what it covered" })

export const ActionsResponse = Schema.Struct({
  brand: Str("The brand's slug"),
  range: RangeEcho,
  actions: Schema.Array(Action).annotations({
    description:
      "At most 20: fix_crawler_errors, serve_llms_txt, block_spoofed, earn_citations_from, win_prompt in that order; " +
      "within a kind by its sort key descending, then by name"
  }),
  count: Count("Actions in this response"),
  looked_at: ActionsLookedAt
}).annotations({ identifier: "ActionsResponse" })

const DESCRIPTION =
  "What to fix first for a brand, from its AI crawler logs and the AI answers together: a short list of actions, " +
  "each derived by a fixed rule. Each names its evidence in numbers that GET /brands/:slug/agents/pages, " +
  "GET /brands/:slug/agents, GET /industry/gap and GET /brands/:slug/mentions report for the same range. Call it first " +
  "when a user asks what to do next, what to fix first or how to improve their AI visibility; then open the evidence " +
  "with the tools named above. Kinds, in this order: fix_crawler_errors (a path with at least 10 crawler hits, at " +
  "least 20% of them 4xx/5xx), serve_llms_txt (every crawler request for /llms.txt answered 404), block_spoofed (a " +
  "bot with at least 20 hits, at least 20% of them spoofed), earn_citations_from (a domain cited with competitors and " +
  "never with the brand in at least 3 answers), win_prompt (a monitored prompt with at least 5 answers where a " +
  "competitor is named in at least 50% and the brand in at most 10%). At most 20 actions; an empty list means no " +
  "rule matched, and looked_at says what was read. Parameters: slug; range = 7d, 30d or 90d: the last N days up to " +
  "and including today (UTC), default 30d."

export class ActionsGroup extends HttpApiGroup.make("actions")
  .annotate(OpenApi.Description, "What to fix first: actions from the crawler logs and the AI answers, each with its evidence")
  .add(
    HttpApiEndpoint.get("list", "/brands/:slug/actions")
      .annotate(McpTool, { name: "get_brand_actions" })
      .setPath(SlugPath)
      .setUrlParams(ActionsUrlParams)
      .addSuccess(ActionsResponse)
      .annotate(OpenApi.Summary, "What to fix first: actions from crawler logs and AI answers, with their evidence")
      .annotate(OpenApi.Description, DESCRIPTION)
  )
  .addError(BadRequestError)
  .addError(UnauthorizedError)
  .addError(NotFoundError)
  .middleware(BearerAuth)
{}
