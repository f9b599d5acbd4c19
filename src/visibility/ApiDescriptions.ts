/**
 * What each visibility, citations and industry endpoint answers, written for the people and the AI
 * assistants that read the API reference: the OpenAPI description of the endpoint, and the description
 * of its MCP tool (src/mcp/Tools.ts turns each `GET /path` named here into that endpoint's tool name).
 * These texts say which question each endpoint answers and when
 * another one answers it better.
 */

import { ENGINE_SLUGS } from "../platform/Schemas.js"

const ENGINES = ENGINE_SLUGS.join(", ")

const RANGE = "range = 7d, 30d or 90d: the last N days up to and including today (UTC), default 30d"

/** Rates and shares are estimates from a sample of AI answers. */
const INTERVALS =
  " Rates and shares are measured on a sample of AI answers: where the answer carries a sample size (`n`), a 95% " +
  "interval (`*_ci95`) or `significant`, quote the interval for small samples and call a change real " +
  "only when `significant` is true. An interval `[low, high]` says how much the figure moves from one asking to " +
  "the next on the monitored prompts and engines (the engines' answer-to-answer variation), not how other prompts " +
  "would fare; quote both ends (e.g. 71.2 (68.9-73.4)), never a symmetric ±, since intervals near 0 or 100 are lopsided."

export const VisibilityDescriptions = {
  snapshots:
    "Daily AI visibility of one brand: for each UTC day with observations, how many AI answers were read " +
    "(total_responses) and how many mentioned the brand (brand_mentions), the citation rate of the brand's domain, " +
    "the mention rate per engine, sentiment (mean score in [-1, 1] and shares), rank statistics (1 = named first) " +
    "and each competitor's mean sentiment. Use it for a trend over days (a weekly or monthly report). For one " +
    "figure per brand across the account use GET /portfolio, for engines side by side GET /model, for share of " +
    "voice against competitors GET /industry/metrics. Parameters: slug (required); " + RANGE + ". Days without " +
    "observations are absent; rates are fractions 0..1 of the day's answers." + INTERVALS,
  mentions:
    "Recent AI answers that mention a brand, newest first, from the last 30 days: engine, prompt, the sentence " +
    "naming the brand (at most 300 characters), its rank in the answer (1 = named first), the sentiment label and " +
    "the answer's first citation of the brand's domain. Use it for examples and quotes; for counts and rates use " +
    "GET /brands/:slug/snapshots. Parameters: slug (required); sentiment = pos, neu or neg (absent = all); region " +
    "(ISO-3166-1 alpha-2, default the brand's primary region); language (ISO-639-1, default the region's language). " +
    "At most 500 mentions.",
  prompts:
    "The prompts monitored for a brand: the questions put to every AI engine on every scan, with topic, intent, " +
    "source and creation time; plus used_total (monitored prompts over all brands of the account) and limit (the " +
    "plan's cap). Use it to know what the visibility figures are measured on. Parameter: slug.",
  portfolio:
    "Every brand of the account in one call: its AI presence score (100 x the share of AI answers mentioning it " +
    "over the range, one decimal), the change of the score over the last 7 days against the 7 days before, the " +
    "engine with the highest mention rate and the competitor mentioned most. Use it for an overview or to compare " +
    "the account's brands; for one brand's daily trend use GET /brands/:slug/snapshots. Parameter: " + RANGE +
    ". All regions." + INTERVALS,
  model:
    `How one brand fares on each AI engine (${ENGINES}): score = 100 x the share of that engine's answers ` +
    "mentioning the brand over the range, " +
    "and delta = the change against the previous period of the same length. Use it for \"which engine mentions us " +
    "most or least\". Parameters: brand (slug; default the newest added brand, so pass it); " + RANGE + "." +
    INTERVALS,
  topics:
    "The topic themes of all monitored prompts of the account, with the number of prompts of each and a tier (1 = " +
    "the top third by count). Account-wide; no parameters. Use it to see what the monitoring covers or to choose a " +
    "topic for GET /industry/ranking."
} as const

export const CitationsDescriptions = {
  citations:
    "Which web domains AI answers cite, over every brand of the account, most cited first: citations, share of all " +
    "citations (0..1) and bucket (owned = the brand's own domain, competitor = a tracked competitor's, ugc = forums, " +
    "social and video sites, reference = encyclopedias and dictionaries, earned = every other site). Use it for " +
    "\"where do AI engines get their information about us\"; for sites that cite competitors but never the brand " +
    "use GET /industry/gap, for one competitor's sources GET /industry/competitors/:name/citations. Parameters: " +
    RANGE + "; brand (slug: only that brand's answers, buckets relative to it; absent = every brand; unknown = 404). Citations of fan-out sub-questions are not counted (GET /citations/fanouts).",
  fanouts:
    "How AI engines broke the monitored prompts into sub-questions they searched for (query fan-out), with the URLs " +
    "cited for each: one group per prompt and engine, its latest decomposition in the range. Use it to see what an " +
    "engine actually searched before answering. Parameter: " + RANGE + ". truncated_groups = true when the " +
    "server's group cap was reached: narrow the range to see the rest."
} as const

export const IndustryDescriptions = {
  metrics:
    "Share of voice of a brand against its tracked competitors: a ranking of the brand and each competitor by the AI " +
    "answers mentioning it (share of voice 0..1, its change against the previous period, sentiment shares), a daily " +
    "series of mentions, and the brand's totals (mentions, answers read, mean rank). Use it for \"how do we compare " +
    "with competitors\"; for the ranking within one topic use GET /industry/ranking. Parameters: brand (slug; " +
    "default the account's primary brand, the earliest added); " + RANGE + `; engine (one engine slug: ${ENGINES}; ` +
    "absent = all engines, any other value matches nothing); region (ISO-3166-1 alpha-2, default the brand's primary region); language (ISO-639-1, " +
    "default the region's language)." + INTERVALS,
  competitorCitations:
    "The domains cited in a brand's AI answers (default the primary brand) that mention one competitor, most cited first, with share " +
    "and bucket: where that competitor's visibility comes from. Parameters: name (a tracked competitor, " +
    "case-insensitive, as named in GET /industry/metrics or GET /portfolio); " + RANGE + "; brand (slug: that " +
    "brand's competitor in its answers; default the primary brand). A name that is not a tracked competitor answers 404.",
  competitorPrompts:
    "The monitored prompts where one competitor appeared in AI answers, most appearances first: the engines, the " +
    "competitor's mean rank, and brand_mentioned, how many of those answers also name the brand (fewer than " +
    "appearances = answers naming the competitor and not us). Parameters: name (a tracked competitor, " +
    "case-insensitive); " + RANGE + "; brand (slug; default the primary brand). A name that is not a tracked " +
    "competitor answers 404.",
  gap:
    "The citation gap of a brand (default the primary brand): domains that AI answers cite alongside competitors but never alongside " +
    "the brand, ranked by opportunity (answers mentioning a competitor that cite the domain), with the competitors " +
    "seen there and the domain's bucket. Use it for \"where do competitors get cited and we don't\": the sites " +
    "to earn a presence on. Parameters: " + RANGE + "; region (ISO-3166-1 alpha-2, case-insensitive; absent = all " +
    "regions); topic (the exact topic of a monitored prompt of the brand: only answers to those prompts; absent = " +
    "all); brand (slug; default the primary brand; unknown = 404).",
  ranking:
    "Share-of-voice ranking of a brand (default the primary brand) and its competitors, over all monitored prompts or those of one " +
    "topic: mentions, share (0..1), change against the previous period, sentiment shares. Use it for \"who leads " +
    "on topic X\" (topics from GET /topics); for the overview with a daily series use GET /industry/metrics. " +
    "Parameters: " + RANGE + "; topic (the exact topic of a monitored prompt; absent = all); brand (slug; default " +
    `the primary brand; unknown = 404); engine (one engine slug: ${ENGINES}; absent = all engines, any other value ` +
    "matches nothing); region (ISO-3166-1 alpha-2, case-insensitive; absent = every region and language)." + INTERVALS
} as const
