import type { SearchPerformanceResponse as SearchPerformanceSchema } from "../../../agents/Api.js"
import { get } from "../api.js"
import { chart, PALETTE } from "../charts.js"
import { formatNumber, h } from "../dom.js"
import { brandNav } from "./nav.js"
import { CENSUS_NOTE, connectLogs, hookedTable } from "./attribution.js"
import { brandTitle, emptyState, engineLabel, errorState, navigate, pageHead, rangeField, rangeLabel, rangeOf, section } from "../kit.js"

/**
 * The AI search funnel of the brand's site (GET /api/v1/me/brands/{slug}/search-performance): pages indexed
 * by AI search crawlers, pages fetched live while an engine answered, and visitors the answers sent, per day,
 * per engine and per page. State: ?range=7d|30d|90d (default 30d), applied on change.
 */

type SearchPerformance = typeof SearchPerformanceSchema.Encoded

const STAGES = [
  ["search_crawls", "Indexed by AI search", "hits of AI search crawlers"],
  ["agent_fetches", "Fetched while answering", "pages an engine read live to answer a question"],
  ["referrals", "Visitors sent", "people who clicked through from an answer"]
] as const

export const searchPerformanceScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/search-performance`
  const range = rangeOf(params)
  const funnel = section("Funnel", "search-funnel")
  const engines = section("By engine", "search-engines")
  const pages = section("Top pages", "search-pages")

  void get<SearchPerformance>(`/api/v1/me/brands/${slug}/search-performance?range=${range}`).then((result) => {
    if (!result.ok) {
      funnel.fill(errorState("The search performance", result.error))
      engines.fill(null)
      pages.fill(null)
      return
    }
    const data = result.value
    const period = rangeLabel(range).toLowerCase()
    const coverage = data.retention_limited
      ? h("p", { class: "notice", id: "search-coverage" }, `Figures start on ${data.coverage_from}, when this brand's data begins; earlier days of this range have nothing to show.`)
      : null
    const total = data.totals.search_crawls + data.totals.agent_fetches + data.totals.referrals
    if (total === 0) {
      funnel.fill(
        coverage,
        emptyState(`No AI search crawler, answering agent or AI referral reached your site in the ${period} (${data.from} to ${data.to}).`, connectLogs(slug))
      )
      engines.fill(emptyState("Nothing to split by engine yet."))
      pages.fill(emptyState("No page yet."))
      return
    }
    funnel.fill(
      coverage,
      h(
        "div",
        { class: "kpis", id: "search-totals" },
        STAGES.map(([key, label, hint]) =>
          h("div", { class: "kpi", "data-stage": key }, h("div", null, label), h("div", { class: "value" }, formatNumber(data.totals[key])), h("div", { class: "muted" }, hint))
        )
      ),
      chart(
        `AI search funnel per day, ${period}`,
        {
          type: "line",
          data: {
            labels: data.trend.map((d) => d.date),
            datasets: STAGES.map(([key, label], i) => ({ label, data: data.trend.map((d) => d[key]), borderColor: PALETTE[i], backgroundColor: PALETTE[i], pointRadius: 0 }))
          },
          options: { scales: { y: { beginAtZero: true } } }
        },
        260
      ),
      h("p", { class: "muted" }, CENSUS_NOTE)
    )
    engines.fill(
      data.engines.length === 0
        ? emptyState("No engine to show yet.")
        : hookedTable(
          "Search funnel by engine",
          "search-engines-table",
          ["Engine", "Indexed", "Fetched while answering", "Visitors sent"],
          data.engines.map((e) => ({
            attrs: { "data-engine": e.engine },
            cells: [engineLabel(e.engine), formatNumber(e.search_crawls), formatNumber(e.agent_fetches), formatNumber(e.referrals)]
          })),
          [1, 2, 3]
        )
    )
    const lists = [
      ["search_crawls", "Most indexed", data.top_pages.search_crawls],
      ["agent_fetches", "Most fetched while answering", data.top_pages.agent_fetches],
      ["referrals", "Most visited from answers", data.top_pages.referrals]
    ] as const
    pages.fill(
      h(
        "div",
        { class: "grid3" },
        lists.map(([stage, title, rows]) =>
          h(
            "div",
            { "data-stage": stage },
            h("h3", null, title),
            rows.length === 0
              ? h("p", { class: "muted" }, "None in this period.")
              : hookedTable(title, `search-pages-${stage}`, ["Page", "Count"], rows.map((p) => ({ attrs: { "data-path": p.path }, cells: [h("code", null, p.path), formatNumber(p.count)] })), [1])
          )
        )
      )
    )
  })

  return h(
    "div",
    { id: "search-performance-screen" },
    brandNav(slug, "search-performance"),
    pageHead(brandTitle(slug, h("h1"), (n) => `AI search performance · ${n}`), "How AI search reads your site and what it sends back: indexed, fetched while answering, visited."),
    h("div", { class: "form-row card", role: "group", "aria-label": "Filters" }, rangeField("search-range", range, (r) => navigate(path, params, { range: r }))),
    funnel.element,
    engines.element,
    pages.element
  )
}
