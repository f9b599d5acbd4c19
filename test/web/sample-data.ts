import { Schema } from "effect"
import { AgentPagesResponse, AgentsResponse } from "../../src/agents/Api.js"
import { IndustryMetricsResponse, IndustryRankingResponse, ModelResponse, SnapshotsResponse } from "../../src/visibility/Api.js"

/**
 * Sample answers of the endpoints the dashboard pages draw, checked against their response
 * Schemas (so they stay true to the API), for drawing the pages before those endpoints land.
 */

const days = (n: number) =>
  Array.from({ length: n }, (_, i) => new Date(Date.UTC(2026, 4, 1 + i)).toISOString().slice(0, 10))

const wave = (i: number, base: number, amplitude: number) => Math.round(base + amplitude * (1 + Math.sin(i / 3)))

const trendDays = days(30)

const page = (path: string, hits: number, errors: number, bots: Array<string>) => ({
  path,
  hits,
  errors,
  uniques: bots.length,
  bots,
  last_seen: "2026-05-30T18:04:00.000Z"
})

const pages = [
  page("/pricing", 1840, 3, ["GPTBot", "ClaudeBot", "PerplexityBot", "OAI-SearchBot"]),
  page("/docs/getting-started", 1322, 0, ["GPTBot", "ClaudeBot", "ChatGPT-User"]),
  page("/blog/ai-search-guide", 977, 12, ["PerplexityBot", "Perplexity-User"]),
  page("/robots.txt", 640, 0, ["GPTBot", "ClaudeBot", "PerplexityBot", "Google-Extended", "Bytespider"]),
  page("/llms.txt", 311, 0, ["ClaudeBot", "GPTBot"]),
  page("/docs/api", 288, 41, ["ChatGPT-User", "Claude-User"])
]

export const sampleAgents = Schema.encodeSync(AgentsResponse)(Schema.decodeUnknownSync(AgentsResponse)({
  range: "30d",
  filters: { bot: null, vendor: null, kind: null },
  kpis: { hits: 5378, pages: 214, bots: 11, error_rate: 0.0104 },
  trend: trendDays.map((date, i) => {
    const by_kind = {
      training_crawler: wave(i, 60, 30),
      search_crawler: wave(i + 4, 40, 20),
      browsing_agent: wave(i + 8, 15, 10)
    }
    return { date, hits: by_kind.training_crawler + by_kind.search_crawler + by_kind.browsing_agent, by_kind }
  }),
  breakdowns: {
    by_bot: [
      { bot: "GPTBot", vendor: "OpenAI", kind: "training_crawler", hits: 2010 },
      { bot: "ClaudeBot", vendor: "Anthropic", kind: "training_crawler", hits: 1120 },
      { bot: "PerplexityBot", vendor: "Perplexity", kind: "search_crawler", hits: 905 },
      { bot: "OAI-SearchBot", vendor: "OpenAI", kind: "search_crawler", hits: 640 },
      { bot: "ChatGPT-User", vendor: "OpenAI", kind: "browsing_agent", hits: 403 },
      { bot: "Perplexity-User", vendor: "Perplexity", kind: "browsing_agent", hits: 300 }
    ],
    by_vendor: [
      { vendor: "OpenAI", hits: 3053 },
      { vendor: "Anthropic", hits: 1120 },
      { vendor: "Perplexity", hits: 1205 }
    ],
    by_kind: [
      { kind: "training_crawler", hits: 3130 },
      { kind: "search_crawler", hits: 1545 },
      { kind: "browsing_agent", hits: 703 }
    ],
    by_status: [{ status: 200, hits: 5200 }, { status: 404, hits: 56 }, { status: 301, hits: 66 }, { status: null, hits: 56 }],
    by_verification: [
      { verification: "verified", hits: 4102 },
      { verification: "spoofed", hits: 410 },
      { verification: "unverified", hits: 866 }
    ]
  },
  top_pages: pages,
  tag: {
    site_id: "3f1c2b9e-8a41-4d2b-9a77-2c5d3e1f0a11",
    snippet: "<script async src=\"/t.js\" data-site=\"3f1c2b9e-8a41-4d2b-9a77-2c5d3e1f0a11\"></script>"
  },
  retention_limited: false,
  coverage_from: "2026-03-01",
  ranges_snapshot: "2026-08-21"
}))

export const samplePages = (offset: number, limit: number) =>
  Schema.encodeSync(AgentPagesResponse)(Schema.decodeUnknownSync(AgentPagesResponse)({
    pages: pages.slice(offset, offset + limit),
    total: pages.length,
    limit,
    offset,
    retention_limited: false,
    coverage_from: "2026-03-01"
  }))

export const sampleSnapshots = Schema.encodeSync(SnapshotsResponse)(Schema.decodeUnknownSync(SnapshotsResponse)({
  brand_slug: "acme",
  range: "30d",
  count: 30,
  snapshots: trendDays.map((date, i) => ({
    date,
    citation_rate: 0.2 + 0.1 * Math.sin(i / 4),
    brand_mentions: wave(i, 20, 8),
    total_responses: 60,
    per_engine: { chatgpt: 0.4, perplexity: 0.35 },
    sentiment_avg: 0.3 + 0.1 * Math.cos(i / 5),
    sentiment_pos: 0.5,
    sentiment_neu: 0.4,
    sentiment_neg: 0.1,
    ranking: { avg_rank: 2.1, top1_share: 0.3, top3_share: 0.8, mentions: wave(i, 20, 8) },
    ranking_per_engine: {},
    sentiment_per_competitor: {},
    mention_rate: wave(i, 20, 8) / 60,
    mention_rate_ci95: [Math.max(0, wave(i, 20, 8) / 60 - 0.12), Math.min(1, wave(i, 20, 8) / 60 + 0.12)],
    citation_rate_ci95: [0.1, 0.4],
    per_engine_n: { chatgpt: 30, perplexity: 30 },
    per_engine_ci95: { chatgpt: [0.24, 0.58], perplexity: [0.2, 0.53] }
  }))
}))

const row = (name: string, mentions: number, share: number, delta: number, is_own = false, significant = false) => ({
  name,
  mentions,
  share,
  delta,
  is_own,
  is_pinned: false,
  domain: `${name.toLowerCase()}.com`,
  sentiment: { pos: 0.5, neu: 0.4, neg: 0.1 },
  share_ci95: [share - 0.03, share + 0.03] as const,
  delta_ci95: [delta - 0.04, delta + 0.04] as const,
  significant
})

export const sampleIndustryMetrics = Schema.encodeSync(IndustryMetricsResponse)(Schema.decodeUnknownSync(IndustryMetricsResponse)({
  brand_slug: "acme",
  brand_name: "Acme",
  range: "30d",
  from: "2026-05-01",
  to: "2026-05-30",
  engine: "all",
  region: "US",
  language: "en",
  last_refreshed: "2026-05-30T18:00:00.000Z",
  ranking: [row("Acme", 612, 0.41, 0.03, true), row("Globex", 480, 0.32, -0.02), row("Initech", 402, 0.27, -0.01)],
  ranking_count: 3,
  time_series: [],
  time_series_count: 0,
  own: { total_mentions: 612, total_responses: 1800, avg_position: 2.1, n: 1800, mention_rate: 0.34, mention_rate_ci95: [0.3184, 0.3622] },
  tracked_competitors: ["Globex", "Initech"],
  methodology: {}
}))

export const sampleIndustryRanking = Schema.encodeSync(IndustryRankingResponse)(Schema.decodeUnknownSync(IndustryRankingResponse)({
  brand_slug: "acme",
  brand_name: "Acme",
  range: "30d",
  topic: null,
  engine: "all",
  region: "all",
  total_responses: 1800,
  ranking: [row("Acme", 612, 0.41, 0.03, true), row("Globex", 480, 0.32, -0.02), row("Initech", 402, 0.27, -0.01)],
  ranking_count: 3
}))

export const sampleModel = Schema.encodeSync(ModelResponse)(Schema.decodeUnknownSync(ModelResponse)({
  range: "30d",
  engines: [
    { engine: "chatgpt", score: 44.2, delta: 3.1, n: 360, score_ci95: [39.15, 49.36], delta_ci95: [0.4, 5.8], significant: true },
    { engine: "perplexity", score: 38.9, delta: -1.2, n: 360, score_ci95: [33.99, 44.04], delta_ci95: [-8.3, 5.9], significant: false },
    { engine: "gemini", score: 31.5, delta: 0.4, n: 360, score_ci95: [26.93, 36.47], delta_ci95: [-6.4, 7.2], significant: false },
    { engine: "claude", score: 29.8, delta: 2.2, n: 360, score_ci95: [25.3, 34.72], delta_ci95: [-4.5, 8.9], significant: false },
    { engine: "copilot", score: 18.1, delta: 18.1, n: 360, score_ci95: [14.46, 22.41], delta_ci95: null, significant: false }
  ]
}))
