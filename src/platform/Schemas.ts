import { Schema } from "effect"

/** Shared request and response vocabulary of the public API (the OpenAPI document). */

/** The longest brand slug (docs/decisions.md): a slug is a path segment and a key, not a text. */
export const SLUG_MAX_LENGTH = 64

export const Slug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9-]+$/, { message: () => "must match ^[a-z0-9-]+$" }),
  Schema.maxLength(SLUG_MAX_LENGTH, { message: () => `must be at most ${SLUG_MAX_LENGTH} characters` }),
  Schema.annotations({ description: "Brand slug: lowercase letters, digits and hyphens", examples: ["acme"] })
)

export const RangeLiteral = Schema.Literal("7d", "30d", "90d").annotations({
  description: "Time window: the last N days up to and including today (UTC)",
  message: () => ({ message: "must be one of 7d, 30d, 90d", override: true })
})
export type Range = typeof RangeLiteral.Type

/**
 * `range` query parameter. Optional on both sides (so the typed client may leave it out);
 * services apply the default, 30d (docs/decisions.md), with `rangeOrDefault` (docs/architecture.md "Conventions").
 */
export const RangeParam = Schema.optional(RangeLiteral)
export const DEFAULT_RANGE: Range = "30d"
export const rangeOrDefault = (range: Range | undefined): Range => range ?? DEFAULT_RANGE

export const rangeDays = (range: Range): number => (range === "7d" ? 7 : range === "30d" ? 30 : 90)

/** The nine engine slugs (docs/decisions.md). Filters match them exactly; other strings match nothing. */
export const ENGINE_SLUGS = [
  "chatgpt",
  "perplexity",
  "gemini",
  "claude",
  "copilot",
  "grok",
  "deepseek",
  "ai_overview",
  "ai_mode"
] as const
export const EngineSlug = Schema.Literal(...ENGINE_SLUGS)

export const VERTICALS = ["saas", "retail", "finance", "healthcare", "other"] as const
export const Vertical = Schema.Literal(...VERTICALS).annotations({
  message: () => ({ message: `must be one of ${VERTICALS.join(", ")}`, override: true })
})

export const AGENT_KINDS = ["training_crawler", "search_crawler", "browsing_agent", "agentic_browser", "mcp_client"] as const
export const AgentKindLiteral = Schema.Literal(...AGENT_KINDS).annotations({
  message: () => ({ message: `must be one of ${AGENT_KINDS.join(", ")}`, override: true })
})

export const Uuid = Schema.UUID.annotations({ message: () => "must be a UUID" })

/** date-time on the wire: ISO 8601 UTC. */
export const DateTime = Schema.Date.annotations({ description: "ISO 8601 UTC timestamp" })
/** date on the wire: YYYY-MM-DD. */
export const DateOnly = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/)).annotations({ description: "YYYY-MM-DD" })

/**
 * Region (ISO-3166-1 alpha-2) and language (ISO-639-1) codes: two letters in any case on input, stored
 * upper-case (region) and lower-case (language). The one rule for query parameters, brand fields and
 * imported observations alike.
 */
const TWO_LETTERS = /^[A-Za-z]{2}$/
export const REGION_RULE = "must be an ISO-3166-1 alpha-2 code"
export const LANGUAGE_RULE = "must be an ISO-639-1 code"
/** The stored form of a region code, or undefined when the value is not one. */
export const regionCode = (value: unknown): string | undefined =>
  typeof value === "string" && TWO_LETTERS.test(value) ? value.toUpperCase() : undefined
/** The stored form of a language code, or undefined when the value is not one. */
export const languageCode = (value: unknown): string | undefined =>
  typeof value === "string" && TWO_LETTERS.test(value) ? value.toLowerCase() : undefined

export const Region = Schema.String.pipe(Schema.pattern(TWO_LETTERS, { message: () => REGION_RULE }))
export const Language = Schema.String.pipe(Schema.pattern(TWO_LETTERS, { message: () => LANGUAGE_RULE }))

/** Response fields annotated with their description (what the OpenAPI document shows for them). */
export const Count = (description: string) => Schema.Int.annotations({ description })
export const Num = (description: string) => Schema.Number.annotations({ description })
export const Str = (description: string) => Schema.String.annotations({ description })
/** The `range` a read answered for, echoed in its response. */
export const RangeEcho = Str("The time window used: 7d, 30d or 90d")
