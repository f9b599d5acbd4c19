// Type-only imports: erased from the browser bundle, so the screens read the server's own shapes.
import type { AttributionResponse as AttributionSchema } from "../../../agents/Api.js"
import { get } from "../api.js"
import { chart, PALETTE } from "../charts.js"
import { formatNumber, formatPercent, h } from "../dom.js"
import { brandNav } from "./nav.js"
import { brandTitle, emptyState, engineLabel, errorState, navigate, pageHead, rangeField, rangeLabel, rangeOf, section, tableWrap } from "../kit.js"

/**
 * People arriving on the brand's site from an AI answer engine (GET /api/v1/me/brands/{slug}/attribution):
 * referrals per day and engine, the pages they land on, and per vendor how many crawler hits one referral
 * costs. State: ?range=7d|30d|90d (default 30d), applied on change.
 */

type Attribution = typeof AttributionSchema.Encoded

/** A table whose rows carry stable hooks (data-engine, data-path...) for tests and scripts. */
export const hookedTable = (
  label: string,
  id: string,
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<{ readonly attrs: Record<string, string>; readonly cells: ReadonlyArray<Node | string> }>,
  numeric: ReadonlyArray<number>
) =>
  tableWrap(h(
    "table",
    { id, "aria-label": label },
    h("thead", null, h("tr", null, headers.map((name, i) => h("th", { class: numeric.includes(i) ? "num" : null, scope: "col" }, name)))),
    h("tbody", null, rows.map((row) => h("tr", row.attrs, row.cells.map((cell, i) => h("td", { class: numeric.includes(i) ? "num" : null }, cell)))))
  ))

/** Why no interval is shown beside these figures: they count every logged visit, they are not a sample. */
export const CENSUS_NOTE = "These are counts of every visit your logs and tag recorded, not a sample, so no interval applies; a share of few visits still moves a lot from one period to the next."

/** The next step when no traffic is recorded at all: a log source or the tag. */
export const connectLogs = (slug: string) =>
  h("span", null, "Referrals and crawler hits are read from your server or CDN logs and the tracking tag: ", h("a", { href: `#/start?brand=${slug}` }, "connect a log source"), ".")

const ratio = (value: number | null) => (value === null ? "no referral yet" : `${value.toFixed(value >= 100 ? 0 : 1)} hits per referral`)

export const attributionScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/attribution`
  const range = rangeOf(params)
  const summary = section("AI referrals", "attribution-summary")
  const engines = section("By engine", "attribution-engines")
  const pages = section("Landing pages", "attribution-pages")
  const vendors = section("Crawling against referrals", "attribution-vendors", "Crawler hits of each vendor's bots for every visitor its engines sent: a high ratio means the vendor reads a lot and sends few people.")

  void get<Attribution>(`/api/v1/me/brands/${slug}/attribution?range=${range}`).then((result) => {
    if (!result.ok) {
      summary.fill(errorState("The AI referrals", result.error))
      for (const part of [engines, pages, vendors]) part.fill(null)
      return
    }
    const data = result.value
    const period = rangeLabel(range).toLowerCase()
    if (data.total_referrals === 0) {
      summary.fill(
        emptyState(
          `No visitor arrived from an AI answer engine in the ${period} (${data.from} to ${data.to}).`,
          connectLogs(slug),
          range !== "90d" ? h("span", null, " Or ", h("a", { href: `#${path}?range=90d` }, "look at the last 90 days"), ".") : ""
        )
      )
      engines.fill(emptyState("No referral to split by engine."))
      pages.fill(emptyState("No landing page yet."))
    } else {
      const seen = data.engines.map((e) => e.engine)
      summary.fill(
        h("p", { id: "attribution-total" }, h("strong", null, formatNumber(data.total_referrals)), ` visits from AI answer engines in the ${period} (${data.from} to ${data.to}).`),
        chart(
          `AI referrals per day by engine, ${period}`,
          {
            type: "bar",
            data: {
              labels: data.trend.map((d) => d.date),
              datasets: seen.map((engine, i) => ({
                label: engineLabel(engine),
                data: data.trend.map((d) => d.by_engine[engine] ?? 0),
                backgroundColor: PALETTE[i % PALETTE.length]
              }))
            },
            options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } }
          },
          260
        ),
        h("p", { class: "muted" }, CENSUS_NOTE)
      )
      engines.fill(hookedTable(
        "Referrals by engine",
        "attribution-engines-table",
        ["Engine", "Referrals", "Share"],
        data.engines.map((e) => ({ attrs: { "data-engine": e.engine }, cells: [engineLabel(e.engine), formatNumber(e.referrals), formatPercent(e.share)] })),
        [1, 2]
      ))
      pages.fill(hookedTable(
        "Landing pages of AI referrals",
        "attribution-pages-table",
        ["Page", "Referrals", "From"],
        data.landing_pages.map((p) => ({
          attrs: { "data-path": p.path },
          cells: [
            h("code", null, p.path),
            formatNumber(p.referrals),
            Object.entries(p.by_engine).sort(([, a], [, b]) => b - a).map(([e, n]) => `${engineLabel(e)} ${formatNumber(n)}`).join(", ")
          ]
        })),
        [1]
      ))
    }
    vendors.fill(
      data.vendors.length === 0
        ? emptyState(`No AI crawler visit and no AI referral in the ${period}.`, connectLogs(slug))
        : hookedTable(
          "Crawler hits per referral, by vendor",
          "attribution-vendors-table",
          ["Vendor", "Engines", "Crawler hits", "Referrals", "Crawl-to-referral"],
          data.vendors.map((v) => ({
            attrs: { "data-vendor": v.vendor },
            cells: [v.vendor, v.engines.map(engineLabel).join(", "), formatNumber(v.crawler_hits), formatNumber(v.referrals), ratio(v.crawl_to_referral_ratio)]
          })),
          [2, 3, 4]
        )
    )
  })

  return h(
    "div",
    { id: "attribution-screen" },
    brandNav(slug, "attribution"),
    pageHead(brandTitle(slug, h("h1"), (n) => `AI referrals · ${n}`), "People who clicked through to your site from an AI answer, and which pages they landed on."),
    h("div", { class: "form-row card", role: "group", "aria-label": "Filters" }, rangeField("attribution-range", range, (r) => navigate(path, params, { range: r }))),
    summary.element,
    engines.element,
    pages.element,
    vendors.element
  )
}
