/**
 * What each public agent-analytics endpoint answers, written for the people and the AI assistants that
 * read the API reference: the OpenAPI description of the endpoint, and the description of its MCP tool
 * (src/mcp/Tools.ts turns each `GET /path` named here into that endpoint's tool name).
 */

const RANGE = "range = 7d, 30d or 90d: the last N days up to and including today (UTC), default 30d"

const FILTERS =
  "bot (exact bot name, as in breakdowns.by_bot), vendor (exact company operating the bots), kind " +
  "(training_crawler = collects model training data, search_crawler = indexes pages for AI search, browsing_agent " +
  "= fetches pages live while answering, agentic_browser, mcp_client): the filters combine with AND and apply to " +
  "every figure"

const RETENTION =
  " Crawler-filtered figures come from a per-(path, bot) rollup: retention_limited = true means they cover only " +
  "coverage_from onwards."

export const AgentsDescriptions = {
  dashboard:
    "AI crawler traffic on a brand's site: totals (hits, distinct pages, distinct bots, error rate 0..1), a daily " +
    "trend by crawler kind, hits by bot, vendor, kind and HTTP status, the most crawled pages, and the tracking tag " +
    "to install. Use it for \"which AI bots crawl us and how much\"; for every fetched URL with filters and paging " +
    "use GET /brands/:slug/agents/pages, for whether crawling turns into visits GET /brands/:slug/search-performance " +
    "and GET /brands/:slug/attribution. Parameters: slug; " + RANGE + "; " + FILTERS + "." + RETENTION,
  pages:
    "Every URL AI bots fetched on a brand's site, one page of results: path, hits, errors (status >= 400), distinct " +
    "bots and their names, last fetch. Static assets and crawler-directive files (robots.txt, llms.txt) appear " +
    "beside content pages. Use it for \"what do AI bots fetch\". Parameters: slug; " + RANGE + "; " + FILTERS +
    "; folder (a top-level folder name for /<folder>/*, or / for pages at the site root); status (ok = 200-399, " +
    "error = 400 and above, or one 3-digit code); q (case-insensitive substring of the path); sort = hits, path, " +
    "errors or uniques (default hits); dir = asc or desc (default desc for numbers, asc for path); limit (page " +
    "size 1..500, default 100); offset (rows to skip, default 0). total counts every matching path: while offset + " +
    "limit < total, ask again with offset + limit." + RETENTION,
  pageBots:
    "The AI bots that fetched one page of a brand's site, each with its hits split by verification verdict: verified " +
    "(the operator's published IP ranges, reverse DNS or signature confirm the bot), spoofed (the operator publishes a " +
    "method and the check failed: someone else using its name) and unverified (no client IP, or no method published), " +
    "with the verification methods its operator publishes, its errors and its last fetch. Use it for \"which AI crawlers " +
    "read my pricing page, and are they real\"; the page's hits equal its row of GET /brands/:slug/agents/pages under " +
    "the same filters. Parameters: slug; path (required, as listed by the pages list, e.g. /pricing); " + RANGE + "; " +
    FILTERS + "; verification (verified, spoofed or unverified)." + RETENTION,
  searchPerformance:
    "The AI search funnel of a brand's site, per day and per engine: search_crawls (search_crawler hits: pages " +
    "indexed for AI search), agent_fetches (browsing_agent hits: pages fetched live while answering) and referrals " +
    "(people arriving from an AI answer), with the top paths of each stage. Use it for \"does being crawled turn " +
    "into visits\". Parameters: slug; " + RANGE + "." + RETENTION,
  attribution:
    "AI referrals to a brand's site: people (not bots) arriving from an AI answer engine, per day, per engine with " +
    "its share, per landing page, and per crawler vendor the crawl-to-referral ratio (crawler hits per referral, " +
    "null without referrals). Use it for \"which AI engines send us visitors and where do they land\". Parameters: " +
    "slug; " + RANGE + "."
} as const
