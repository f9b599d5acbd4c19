import { UA as INGEST_UA } from "../ingestion/fixtures.js"

/**
 * Hand-made crawler traffic with known answers (docs/agents.md). "Today" is fixed (the app's Clock),
 * so every day offset below is exact. `expectedPages` is the reference answer of the crawled-pages
 * list written from the definitions of docs/agents.md and docs/decisions.md, over these records.
 */

export const NOW = new Date(Date.UTC(2026, 4, 20, 12, 0, 0))
const TODAY = Date.UTC(2026, 4, 20)
const DAY = 86_400_000

export const UA = {
  gptbot: INGEST_UA.gptbot,
  claudebot: INGEST_UA.claudebot,
  perplexitybot: INGEST_UA.perplexitybot,
  chatgptUser: INGEST_UA.chatgptUser,
  oaiSearch: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot",
  chrome: INGEST_UA.chrome
} as const

/** What the catalog says of each User-Agent above (checked by the tests). */
export const AGENT: Record<string, { bot: string; vendor: string; kind: string }> = {
  [UA.gptbot]: { bot: "GPTBot", vendor: "OpenAI", kind: "training_crawler" },
  [UA.claudebot]: { bot: "ClaudeBot", vendor: "Anthropic", kind: "training_crawler" },
  [UA.perplexitybot]: { bot: "PerplexityBot", vendor: "Perplexity", kind: "search_crawler" },
  [UA.chatgptUser]: { bot: "ChatGPT-User", vendor: "OpenAI", kind: "browsing_agent" },
  [UA.oaiSearch]: { bot: "OAI-SearchBot", vendor: "OpenAI", kind: "search_crawler" }
}

export interface Hit {
  readonly daysAgo: number
  readonly minute: number
  readonly ua: string
  readonly path: string
  readonly status: number | null
  readonly ref?: string
}

const h = (daysAgo: number, minute: number, ua: string, path: string, status: number | null, ref?: string): Hit =>
  ref === undefined ? { daysAgo, minute, ua, path, status } : { daysAgo, minute, ua, path, status, ref }

/** The crawler hits (and three referred visits by people) of the brand under test. */
export const HITS: ReadonlyArray<Hit> = [
  h(0, 10, UA.gptbot, "/docs/a", 200),
  h(0, 20, UA.gptbot, "/docs/a", 200),
  h(0, 30, UA.claudebot, "/docs/a", 404),
  h(0, 40, UA.gptbot, "/robots.txt", 200),
  h(0, 50, UA.perplexitybot, "/llms.txt", 200),
  h(0, 60, UA.oaiSearch, "/docs/b", 500),
  h(0, 70, UA.chatgptUser, "/pricing", 200),
  h(0, 80, UA.claudebot, "/assets/app.js", 304),
  h(1, 15, UA.chatgptUser, "/pricing", null),
  h(3, 5, UA.gptbot, "/blog/x", 200),
  h(3, 6, UA.claudebot, "/blog/x", 200),
  h(3, 7, UA.perplexitybot, "/", 301),
  h(10, 1, UA.perplexitybot, "/blog/y", 404),
  h(10, 2, UA.gptbot, "/docs/a", 200),
  h(12, 3, UA.oaiSearch, "/Docs/C", 200),
  h(20, 4, UA.claudebot, "/pricing", 503),
  h(40, 5, UA.gptbot, "/old", 200),
  h(60, 6, UA.perplexitybot, "/docs/a", 404),
  h(95, 7, UA.gptbot, "/ancient", 200)
]

export const VISITS: ReadonlyArray<Hit> = [
  h(0, 90, UA.chrome, "/pricing", 200, "https://chatgpt.com/"),
  h(2, 9, UA.chrome, "/docs/a", 200, "https://www.perplexity.ai/search?q=x"),
  h(45, 9, UA.chrome, "/pricing", 200, "https://chatgpt.com/c/123")
]

export const tsOf = (hit: Hit) => TODAY - hit.daysAgo * DAY + hit.minute * 60_000
export const dayOf = (hit: Hit) => new Date(TODAY - hit.daysAgo * DAY).toISOString().slice(0, 10)

export const toRecord = (hit: Hit) => ({
  ua: hit.ua,
  path: hit.path,
  ts: tsOf(hit),
  ...(hit.status === null ? {} : { status: hit.status }),
  ...(hit.ref === undefined ? {} : { ref: hit.ref })
})

export const RANGES = { "7d": 7, "30d": 30, "90d": 90 } as const

export interface Params {
  range?: "7d" | "30d" | "90d"
  bot?: string
  vendor?: string
  kind?: string
  folder?: string
  q?: string
  status?: string
  sort?: string
  dir?: "asc" | "desc"
}

const inRange = (hit: Hit, range: keyof typeof RANGES) => hit.daysAgo < RANGES[range]

export const matchingHits = (params: Params, hits: ReadonlyArray<Hit> = HITS) =>
  hits.filter((hit) => {
    const agent = AGENT[hit.ua]!
    if (!inRange(hit, params.range ?? "30d")) return false
    if (params.bot !== undefined && agent.bot !== params.bot) return false
    if (params.vendor !== undefined && agent.vendor !== params.vendor) return false
    if (params.kind !== undefined && agent.kind !== params.kind) return false
    if (params.folder !== undefined) {
      const folder = params.folder.replace(/^\/+|\/+$/g, "")
      if (folder === "" ? hit.path.slice(1).includes("/") : !hit.path.startsWith(`/${folder}/`)) return false
    }
    if (params.q !== undefined && !hit.path.toLowerCase().includes(params.q.toLowerCase())) return false
    if (params.status !== undefined) {
      const s = hit.status
      if (s === null) return false
      if (params.status === "ok" && !(s >= 200 && s <= 399)) return false
      if (params.status === "error" && s < 400) return false
      if (/^\d+$/.test(params.status) && s !== Number(params.status)) return false
    }
    return true
  })

export const expectedPages = (params: Params, hits: ReadonlyArray<Hit> = HITS) => {
  const byPath = new Map<string, { hits: number; errors: number; bots: Set<string>; last: number }>()
  for (const hit of matchingHits(params, hits)) {
    const row = byPath.get(hit.path) ?? { hits: 0, errors: 0, bots: new Set(), last: 0 }
    row.hits++
    if (hit.status !== null && hit.status >= 400) row.errors++
    row.bots.add(AGENT[hit.ua]!.bot)
    row.last = Math.max(row.last, tsOf(hit))
    byPath.set(hit.path, row)
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  const rows = [...byPath].map(([path, r]) => ({
    path,
    hits: r.hits,
    errors: r.errors,
    uniques: r.bots.size,
    bots: [...r.bots].sort(cmp),
    last_seen: new Date(r.last).toISOString()
  }))
  const known = ["hits", "path", "errors", "uniques"]
  const sort = known.includes(params.sort ?? "") ? (params.sort as "hits" | "path" | "errors" | "uniques") : "hits"
  const dir = params.sort === undefined ? (sort === "path" ? "asc" : "desc") : params.dir ?? (sort === "path" ? "asc" : "desc")
  const sign = dir === "asc" ? 1 : -1
  return rows.sort((a, b) => (sort === "path" ? sign * cmp(a.path, b.path) : sign * (a[sort] - b[sort]) || cmp(a.path, b.path)))
}

export const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined) search.set(k, String(v))
  const s = search.toString()
  return s === "" ? "" : `?${s}`
}
