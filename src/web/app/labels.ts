/**
 * Human labels of the API's slugs, in one place for every screen: the API speaks in slugs
 * (`training_crawler`, `ai_overview`, `growth`), people read names. Slugs stay visible only where a
 * user copies them (site ids, brand slugs in URLs, API parameters).
 */

/** "some_slug-name" -> "Some slug name": the fallback for a slug no table knows yet. */
export const humanize = (slug: string) => {
  const words = slug.replace(/[_-]+/g, " ").trim()
  return words === "" ? slug : words.charAt(0).toUpperCase() + words.slice(1)
}

const lookup = (table: Readonly<Record<string, string>>) => (slug: string) => table[slug] ?? humanize(slug)

export const KIND_LABELS: Readonly<Record<string, string>> = {
  training_crawler: "Training crawler",
  search_crawler: "AI search crawler",
  browsing_agent: "Browsing agent",
  agentic_browser: "Agentic browser",
  mcp_client: "MCP client"
}
/** What each kind of agent does, for a tooltip or a legend. */
export const KIND_DESCRIPTIONS: Readonly<Record<string, string>> = {
  training_crawler: "collects pages to train AI models",
  search_crawler: "indexes pages for AI search answers",
  browsing_agent: "fetches a page while answering a user's question",
  agentic_browser: "a browser driven by an AI agent",
  mcp_client: "an AI tool reading through the Model Context Protocol"
}
export const kindLabel = lookup(KIND_LABELS)

export const ENGINE_LABELS: Readonly<Record<string, string>> = {
  chatgpt: "ChatGPT",
  perplexity: "Perplexity",
  gemini: "Gemini",
  claude: "Claude",
  copilot: "Microsoft Copilot",
  grok: "Grok",
  deepseek: "DeepSeek",
  ai_overview: "Google AI Overviews",
  ai_mode: "Google AI Mode"
}
export const engineLabel = lookup(ENGINE_LABELS)

export const VERDICT_LABELS: Readonly<Record<string, string>> = {
  verified: "Verified",
  spoofed: "Spoofed",
  unverified: "Not verifiable"
}
export const verdictLabel = lookup(VERDICT_LABELS)

/** How an operator lets a visit be verified (the catalog's verification_methods); "none": nothing published. */
export const METHOD_LABELS: Readonly<Record<string, string>> = {
  ip_ranges: "IP ranges",
  reverse_dns: "Reverse DNS",
  web_bot_auth: "Web Bot Auth",
  none: "None published"
}
export const METHOD_DESCRIPTIONS: Readonly<Record<string, string>> = {
  ip_ranges: "the operator publishes the addresses its agent fetches from; a visit from elsewhere is spoofed",
  reverse_dns: "the visitor's address must resolve to a host name the operator documents, and back",
  web_bot_auth: "the request carries a signature made with a key the operator publishes",
  none: "the operator publishes no way to check: visits claiming the agent stay not verifiable"
}
export const methodLabel = lookup(METHOD_LABELS)

export const PLAN_LABELS: Readonly<Record<string, string>> = {
  free: "Free",
  starter: "Starter",
  growth: "Growth",
  enterprise: "Enterprise"
}
export const planLabel = lookup(PLAN_LABELS)

export const RANGES = ["7d", "30d", "90d"] as const
export const rangeLabel = (range: string) => {
  const days = /^(\d+)d$/.exec(range)?.[1]
  return days === undefined ? range : `Last ${days} days`
}

export const VERTICAL_LABELS: Readonly<Record<string, string>> = {
  saas: "Software (SaaS)",
  retail: "Retail",
  finance: "Finance",
  healthcare: "Healthcare",
  other: "Other"
}
export const verticalLabel = lookup(VERTICAL_LABELS)

export const SENTIMENT_LABELS: Readonly<Record<string, string>> = {
  positive: "Positive",
  pos: "Positive",
  neutral: "Neutral",
  neu: "Neutral",
  negative: "Negative",
  neg: "Negative"
}
export const sentimentLabel = lookup(SENTIMENT_LABELS)

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  204: "No content",
  206: "Partial content",
  301: "Moved permanently",
  302: "Found (redirect)",
  304: "Not modified",
  307: "Temporary redirect",
  308: "Permanent redirect",
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  410: "Gone",
  429: "Too many requests",
  500: "Server error",
  502: "Bad gateway",
  503: "Unavailable",
  504: "Gateway timeout"
}
/** "404 Not found"; null (a hit without a status) reads "Unknown". */
export const statusLabel = (status: number | null) =>
  status === null ? "Unknown" : STATUS_TEXT[status] === undefined ? String(status) : `${status} ${STATUS_TEXT[status]}`

/** The log-ingestion channels of the ingestion health card. */
export const CHANNEL_LABELS: Readonly<Record<string, string>> = {
  drain: "Log drain",
  batch: "Log files (ship)",
  tag: "Tracking tag",
  ingest: "Ingest API"
}
export const channelLabel = lookup(CHANNEL_LABELS)

/** The smallest plan with a feature (the plans' seeded entitlements), said next to gated steps. */
export const PLAN_FOR = {
  drain: "growth",
  batch: "starter"
} as const
