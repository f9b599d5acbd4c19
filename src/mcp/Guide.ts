import { McpSchema, McpServer } from "@effect/ai"
import { Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import { ENGINE_SLUGS, RangeLiteral, Slug } from "../platform/Schemas.js"
import { InProcessApp, readJson } from "../web/InProcess.js"
import { McpCaller } from "./Tools.js"

/**
 * What an assistant is told about this server: the `instructions` of initialize (which tool answers
 * which question, the conventions every tool shares) and the prompts for the common jobs, each a
 * sequence of calls of the server's own tools (docs/web-and-mcp.md has a session using them).
 */

export const INSTRUCTIONS = [
  `This server answers questions about how AI answer engines (${ENGINE_SLUGS.join(", ")}) talk about this ` +
  "account's brands and their competitors, and which AI crawlers and agents fetch the brands' websites. Every tool is read-only and sees only the account of the API key.",
  "",
  "Start with list_brands when you do not know a brand's slug; most tools take it.",
  "Which tool answers what:",
  "- What should we do next, what to fix first: get_brand_actions (each action cites the numbers of the tools below).",
  "- How visible is a brand, and its trend: get_brand_snapshots (per day); all brands at once: get_portfolio.",
  "- Which AI engines mention us most or least: get_engine_performance.",
  "- How do we compare with competitors (share of voice): get_industry_metrics; within one topic: get_industry_ranking " +
  "(topics from get_topics).",
  "- What do AI answers say about us (quotes, sentiment): get_brand_mentions.",
  "- Which websites AI answers cite: get_citations; where competitors get cited and we don't: get_industry_gap, then " +
  "get_competitor_citations and get_competitor_prompts for one competitor.",
  "- What engines searched before answering: get_citation_fanouts. What the monitoring asks: get_brand_prompts.",
  "- Which AI bots crawl us: get_brand_agents; which URLs they fetch: get_brand_agent_pages; which bots read one page " +
  "and whether they are real (verified, spoofed, unverified): get_brand_agent_page_bots.",
  "- Does crawling bring visitors: get_brand_search_performance (crawled, fetched, visited) and get_brand_attribution " +
  "(referrals by engine and landing page).",
  "",
  "Conventions: range is 7d, 30d or 90d (default 30d), the last N days up to today in UTC. Rates and shares are " +
  "fractions 0..1, scores 0..100. Figures are estimates from a sample of AI answers: where a result carries a sample " +
  "size (n), a 95% interval (*_ci95) or significant, quote the interval and call a change real only when significant " +
  "is true. Lists come a page at a time: pass limit and offset and follow page.next_offset (get_brand_agent_pages: " +
  "offset + limit < total). A failed call is an isError result with the API's JSON body {\"error\": \"...\"}: a 400 " +
  "names the argument to fix, a 404 means the brand or competitor is not in this account.",
  "",
  "Prompts for common jobs: weekly_visibility_report, ai_crawler_report, competitor_citation_gap."
].join("\n")

interface PromptArgumentSpec {
  readonly name: string
  readonly description: string
  readonly required: boolean
  readonly check: (value: string) => Either.Either<string, ParseResult.ParseError>
}

interface PromptSpec {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly arguments: ReadonlyArray<PromptArgumentSpec>
  readonly text: (args: Readonly<Record<string, string | undefined>>) => string
}

const brandArgument: PromptArgumentSpec = {
  name: "brand",
  description: "The brand's slug, as list_brands gives it (e.g. acme)",
  required: true,
  check: Schema.decodeUnknownEither(Slug.pipe(Schema.maxLength(200)))
}

const rangeArgument: PromptArgumentSpec = {
  name: "range",
  description: "7d, 30d or 90d; default 30d",
  required: false,
  check: Schema.decodeUnknownEither(RangeLiteral)
}

const json = (value: Record<string, unknown>) => JSON.stringify(value)

export const PROMPTS: ReadonlyArray<PromptSpec> = [
  {
    name: "weekly_visibility_report",
    title: "Weekly AI-visibility report of a brand",
    description:
      "A one-page report of how AI engines talked about a brand over the last 7 days: mention rate, trend, engines, " +
      "share of voice against competitors, and example answers.",
    arguments: [brandArgument],
    text: ({ brand }) =>
      [
        `Write a weekly AI-visibility report for the brand "${brand}". Use these tools of the ai-visibility server:`,
        `1. get_brand ${json({ slug: brand })}: its name and domain.`,
        `2. get_brand_snapshots ${json({ slug: brand, range: "7d" })}: per day, answers read, mentions, citation rate, sentiment.`,
        `3. get_engine_performance ${json({ brand, range: "7d" })}: the score per engine and its change against the week before.`,
        `4. get_industry_metrics ${json({ brand, range: "7d" })}: share of voice against the competitors and its change.`,
        `5. get_brand_mentions ${json({ slug: brand, limit: 5 })}, and with ${json({ sentiment: "neg", limit: 3 })}: answers to quote.`,
        "Report: the mention rate of the week and its direction, the best and worst engine, the share-of-voice rank and " +
        "the competitor that gained most, two or three quotes with their engine. Quote 95% intervals where the data " +
        "carries them and call a change real only when it is marked significant; say so when the week has few answers."
      ].join("\n")
  },
  {
    name: "ai_crawler_report",
    title: "Which AI bots crawl us and what they fetch",
    description:
      "Which AI crawlers and agents fetch a brand's site, what they fetch, which fetches fail, and whether crawling " +
      "turns into visitors.",
    arguments: [brandArgument, rangeArgument],
    text: ({ brand, range = "30d" }) =>
      [
        `Explain which AI bots crawl the site of the brand "${brand}" and what they fetch (range ${range}). Use these tools:`,
        `1. get_brand_agents ${json({ slug: brand, range })}: hits, bots, vendors, crawler kinds, statuses, daily trend.`,
        `2. get_brand_agent_pages ${json({ slug: brand, range, sort: "hits", limit: 10 })}: the most fetched URLs.`,
        `3. get_brand_agent_pages ${json({ slug: brand, range, status: "error", sort: "errors", limit: 10 })}: URLs failing for bots.`,
        `4. get_brand_search_performance ${json({ slug: brand, range })}: crawled, fetched while answering, visited.`,
        `5. get_brand_attribution ${json({ slug: brand, range })}: visitors sent by each AI engine and where they land.`,
        "Report: the vendors and bots by hits and what kind of crawling each does (training, search, live answering), " +
        "the pages they favour, errors to fix, and which engines send visitors for their crawling (crawl-to-referral " +
        "ratio). Use get_brand_agent_pages with a bot, vendor or kind filter to look closer at one of them."
      ].join("\n")
  },
  {
    name: "competitor_citation_gap",
    title: "Where competitors get cited and we don't",
    description:
      "The websites AI answers cite alongside competitors but never alongside the account's primary brand, and the " +
      "prompts where competitors appear without it.",
    arguments: [
      rangeArgument,
      {
        name: "region",
        description: "ISO-3166-1 alpha-2 region (e.g. US); absent = all regions",
        required: false,
        check: Schema.decodeUnknownEither(Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2}$/)))
      }
    ],
    text: ({ range = "30d", region }) =>
      [
        `Find where competitors get cited by AI engines and the account's primary brand does not (range ${range}${
          region === undefined ? "" : `, region ${region}`
        }). Use these tools:`,
        `1. get_industry_metrics ${json({ range })}: the primary brand and its competitors by share of voice.`,
        `2. get_industry_gap ${json(region === undefined ? { range, limit: 15 } : { range, region, limit: 15 })}: domains cited with competitors, never with the brand, by opportunity.`,
        `3. For the two competitors with the largest share of voice: get_competitor_citations ${json({ name: "<competitor>", range, limit: 10 })} ` +
        `and get_competitor_prompts ${json({ name: "<competitor>", range, limit: 10 })} (prompts where brand_mentioned < appearances are answers naming the competitor and not us).`,
        `4. get_citations ${json({ range, limit: 15 })}: the domains cited overall, with their bucket, to see which gap domains matter.`,
        "Report: the gap domains worth earning a presence on (with the competitors seen there and their bucket: ugc, " +
        "reference, earned), the prompts where competitors win, and a short plan."
      ].join("\n")
  }
]

const argumentMessage = (name: string, error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  return `Invalid params: argument ${name}: ${issue?.message ?? "is invalid"}`
}

/** The caller's brand slugs starting with what was typed, for the `brand` argument's completion. */
const brandCompletion = (input: string) =>
  Effect.gen(function*() {
    const caller = yield* Effect.serviceOption(McpCaller)
    const inProcess = yield* InProcessApp
    if (Option.isNone(caller)) return []
    const response = yield* inProcess.run({ method: "GET", url: "/api/public/v1/brands", headers: { authorization: caller.value.authorization } })
    const { body, status } = yield* readJson(response)
    if (status !== 200) return []
    const decoded = Schema.decodeUnknownOption(Schema.Struct({ brands: Schema.Array(Schema.Struct({ brand_slug: Schema.String })) }))(body)
    return Option.match(decoded, {
      onNone: () => [],
      onSome: ({ brands }) => brands.map((brand) => brand.brand_slug).filter((slug) => slug.startsWith(input))
    })
  }).pipe(
    Effect.map((values) => new McpSchema.CompleteResult({ completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } })),
    Effect.catchAllCause(() => Effect.succeed(McpSchema.CompleteResult.empty))
  )

/** Registers the prompts; bad arguments are a JSON-RPC -32602 error naming the argument. */
export const PromptsLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const inProcess = yield* InProcessApp
    for (const spec of PROMPTS) {
      yield* server.addPrompt({
        prompt: new McpSchema.Prompt({
          name: spec.name,
          title: spec.title,
          description: spec.description,
          arguments: spec.arguments.map(({ description, name, required }) => ({ name, description, required }))
        }),
        completions: spec.arguments.some((argument) => argument.name === "brand")
          ? {
            // allow-cast: runs in the fiber of the /mcp request, which carries the server's DefaultServices.
            brand: (input: string) =>
              Effect.provideService(brandCompletion(input), InProcessApp, inProcess) as Effect.Effect<McpSchema.CompleteResult>
          }
          : {},
        handle: (params: Record<string, string>) =>
          Effect.gen(function*() {
            const args: Record<string, string | undefined> = {}
            const known = new Set(spec.arguments.map((argument) => argument.name))
            for (const name of Object.keys(params)) {
              if (!known.has(name)) {
                return yield* new McpSchema.InvalidParams({
                  message: `Invalid params: unknown argument ${name}; ${spec.name} takes ${[...known].join(", ")}`
                })
              }
            }
            for (const argument of spec.arguments) {
              const value = params[argument.name]
              if (value === undefined || value === "") {
                if (argument.required) {
                  return yield* new McpSchema.InvalidParams({ message: `Invalid params: argument ${argument.name} is missing` })
                }
                continue
              }
              const decoded = argument.check(value)
              if (Either.isLeft(decoded)) return yield* new McpSchema.InvalidParams({ message: argumentMessage(argument.name, decoded.left) })
              args[argument.name] = decoded.right
            }
            return new McpSchema.GetPromptResult({
              description: spec.description,
              messages: [{ role: "user", content: { type: "text", text: spec.text(args) } }]
            })
          })
      })
    }
  })
)
