import { get, type IndustryMetricsResponse, type ModelResponse, type SnapshotsResponse } from "./api.js"
import { tabs, unavailable } from "./agents.js"
import { chart, PALETTE } from "./charts.js"
import { append, clear, formatNumber, formatPercent, h } from "./dom.js"

/** How AI answer engines talk about one brand: daily snapshots, share of voice, engines. */

const section = (title: string, id: string) => {
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"))
  return { body, element: h("div", { class: "card", id }, h("h2", null, title), body) }
}

const signed = (value: number, digits = 1) => `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`

export const visibilityPage = (slug: string, params: URLSearchParams) => {
  const range = params.get("range") ?? "30d"
  const query = `range=${encodeURIComponent(range)}`
  const rangeSelect = h(
    "select",
    { name: "range", onchange: () => (location.hash = `#/brands/${slug}/visibility?range=${rangeSelect.value}`) },
    ["7d", "30d", "90d"].map((r) => h("option", { value: r, selected: r === range }, `last ${r}`))
  )
  const snapshots = section("Daily snapshots", "snapshots")
  const share = section("Share of voice", "share-of-voice")
  const engines = section("Engines", "engines")

  void get<SnapshotsResponse>(`/api/v1/me/brands/${slug}/snapshots?${query}`).then((result) => {
    clear(snapshots.body)
    if (!result.ok) return append(snapshots.body, [unavailable(result.error, "Snapshots")])
    const rows = result.value.snapshots
    append(snapshots.body, [
      rows.length === 0
        ? h("p", { class: "muted" }, "No answer observations in this range yet.")
        : chart("Mention rate and citation rate per day", {
          type: "line",
          data: {
            labels: rows.map((row) => row.date),
            datasets: [
              { label: "mention rate", data: rows.map((row) => row.total_responses === 0 ? 0 : row.brand_mentions / row.total_responses), borderColor: PALETTE[0]!, backgroundColor: PALETTE[0]! },
              { label: "citation rate", data: rows.map((row) => row.citation_rate), borderColor: PALETTE[1]!, backgroundColor: PALETTE[1]! },
              { label: "sentiment (-1..1)", data: rows.map((row) => row.sentiment_avg), borderColor: PALETTE[2]!, backgroundColor: PALETTE[2]! }
            ]
          },
          options: { scales: { y: { suggestedMin: 0, suggestedMax: 1 } } }
        }, 300)
    ])
  })

  void get<IndustryMetricsResponse>(`/api/v1/me/brands/${slug}/industry-metrics?${query}`).then((result) => {
    clear(share.body)
    if (!result.ok) return append(share.body, [unavailable(result.error, "Share of voice")])
    const ranking = result.value.ranking
    append(share.body, [
      ranking.length === 0
        ? h("p", { class: "muted" }, "No mentions in this range yet.")
        : h(
          "div",
          { class: "grid2" },
          chart("Share of voice", {
            type: "doughnut",
            data: { labels: ranking.map((row) => row.name), datasets: [{ data: ranking.map((row) => row.share), backgroundColor: PALETTE }] },
            options: { plugins: { legend: { position: "right" } } }
          }),
          h(
            "table",
            null,
            h("thead", null, h("tr", null, h("th", null, "Entity"), h("th", { class: "num" }, "Mentions"), h("th", { class: "num" }, "Share"), h("th", { class: "num" }, "Δ"))),
            h(
              "tbody",
              null,
              ranking.map((row) =>
                h(
                  "tr",
                  null,
                  h("td", null, row.is_own ? h("strong", null, row.name) : row.name),
                  h("td", { class: "num" }, formatNumber(row.mentions)),
                  h("td", { class: "num" }, formatPercent(row.share)),
                  h("td", { class: "num" }, signed(row.delta * 100) + " pt")
                )
              )
            )
          )
        )
    ])
  })

  void get<ModelResponse>(`/api/v1/me/brands/${slug}/model?${query}`).then((result) => {
    clear(engines.body)
    if (!result.ok) return append(engines.body, [unavailable(result.error, "Engine performance")])
    const rows = result.value.engines
    append(engines.body, [
      rows.length === 0
        ? h("p", { class: "muted" }, "No engine data in this range yet.")
        : chart("AI presence score per engine", {
          type: "bar",
          data: { labels: rows.map((row) => row.engine), datasets: [{ label: "score (0-100)", data: rows.map((row) => row.score), backgroundColor: PALETTE[0]! }] },
          options: { scales: { y: { beginAtZero: true, suggestedMax: 100 } } }
        })
    ])
  })

  return h(
    "div",
    { id: "visibility-page" },
    tabs(slug, "visibility"),
    h("h1", null, `Visibility in AI answers · ${slug}`),
    h("div", { class: "row card" }, h("div", null, h("label", null, "Range"), rangeSelect)),
    snapshots.element,
    share.element,
    engines.element
  )
}
