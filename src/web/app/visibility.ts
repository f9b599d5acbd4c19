import { get, type IndustryMetricsResponse, type ModelResponse, type ScanStatusResponse, type SnapshotsResponse } from "./api.js"
import { tabs, unavailable } from "./agents.js"
import { chart, PALETTE } from "./charts.js"
import { append, clear, formatNumber, formatPercent, h } from "./dom.js"

/** How AI answer engines talk about one brand: daily snapshots, share of voice, engines. */

const section = (title: string, id: string) => {
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"))
  return { body, element: h("div", { class: "card", id }, h("h2", null, title), body) }
}

const signed = (value: number, digits = 1) => `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`

/** "± x" from a 95% interval around a value (same scale), or "" without one. */
const plusMinus = (interval: readonly [number, number] | null | undefined, scale: number, digits = 1) =>
  interval == null ? "" : ` ± ${((Math.max(interval[1] - interval[0], 0) / 2) * scale).toFixed(digits)}`

/**
 * A change with its significance: "new" when there was nothing before (the change would only repeat
 * the figure), the signed change otherwise, marked "n.s." when its 95% interval includes 0.
 */
const change = (delta: number, isNew: boolean, interval: readonly [number, number] | null | undefined, significant: boolean | undefined, scale: number, unit: string) => {
  if (isNew) return h("span", { class: "muted", title: "no data in the previous period" }, "new")
  const text = signed(delta * scale) + unit
  return interval != null && significant === false
    ? h("span", { class: "muted", title: `not significant: the 95% interval [${signed(interval[0] * scale)}, ${signed(interval[1] * scale)}] includes 0` }, `${text} (n.s.)`)
    : h("span", null, text)
}

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
              // The 95% band of the mention rate: its two edges, dashed.
              { label: "95% low", data: rows.map((row) => row.mention_rate_ci95?.[0] ?? null), borderColor: PALETTE[0]!, borderDash: [4, 4], borderWidth: 1, pointRadius: 0 },
              { label: "95% high", data: rows.map((row) => row.mention_rate_ci95?.[1] ?? null), borderColor: PALETTE[0]!, borderDash: [4, 4], borderWidth: 1, pointRadius: 0 },
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
                  h("td", { class: "num" }, formatPercent(row.share) + plusMinus(row.share_ci95, 100)),
                  h("td", { class: "num" }, change(row.delta, row.share > 0 && Math.abs(row.delta - row.share) < 1e-12, row.delta_ci95, row.significant, 100, " pt"))
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
        : h(
          "div",
          null,
          chart("AI presence score per engine", {
            type: "bar",
            data: {
              labels: rows.map((row) => row.engine),
              datasets: [
                { label: "score (0-100)", data: rows.map((row) => row.score), backgroundColor: PALETTE[0]! },
                // The 95% interval as a thin floating bar beside each score (an error bar).
                { label: "95% interval", data: rows.map((row) => row.score_ci95 == null ? null : [row.score_ci95[0], row.score_ci95[1]]), backgroundColor: PALETTE[3]!, barPercentage: 0.25 }
              ]
            },
            options: { scales: { y: { beginAtZero: true, suggestedMax: 100 } } }
          }),
          h(
            "table",
            null,
            h("thead", null, h("tr", null, h("th", null, "Engine"), h("th", { class: "num" }, "Answers"), h("th", { class: "num" }, "Score"), h("th", { class: "num" }, "Δ"))),
            h(
              "tbody",
              null,
              rows.map((row) =>
                h(
                  "tr",
                  null,
                  h("td", null, row.engine),
                  h("td", { class: "num" }, row.n === undefined ? "" : formatNumber(row.n)),
                  h("td", { class: "num" }, (row.n === 0 ? "–" : row.score.toFixed(1)) + (row.n === 0 ? "" : plusMinus(row.score_ci95, 1))),
                  h("td", { class: "num" }, row.n === 0 ? h("span", { class: "muted" }, "no answers") : change(row.delta, row.delta_ci95 === null, row.delta_ci95, row.significant, 1, " pt"))
                )
              )
            )
          )
        )
    ])
  })

  const scans = section("Last scan", "scans")
  void get<ScanStatusResponse>(`/api/v1/me/brands/${slug}/scans`).then((result) => {
    clear(scans.body)
    if (!result.ok) return append(scans.body, [unavailable(result.error, "Last scan")])
    const { engines: rows, month_tokens, monthly_token_budget } = result.value
    append(scans.body, [
      h(
        "p",
        { class: "muted" },
        `Tokens this month: ${formatNumber(month_tokens)}` + (monthly_token_budget === null ? "" : ` of ${formatNumber(monthly_token_budget)}`)
      ),
      rows.length === 0
        ? h("p", { class: "muted" }, "No scan yet: configure answer engines (README) or import observations.")
        : h(
          "table",
          null,
          h("thead", null, h("tr", null, h("th", null, "Engine"), h("th", null, "Scanned"), h("th", { class: "num" }, "Stored"), h("th", { class: "num" }, "Failed"), h("th", null, "Status"))),
          h(
            "tbody",
            null,
            rows.map((row) =>
              h(
                "tr",
                null,
                h("td", null, row.engine),
                h("td", null, row.scanned_at.replace("T", " ").slice(0, 16) + " UTC"),
                h("td", { class: "num" }, formatNumber(row.observations)),
                h("td", { class: "num" }, formatNumber(row.failures)),
                h("td", null, row.last_error === null ? "ok" : h("span", { class: "muted" }, `failed: ${row.last_error}`))
              )
            )
          )
        )
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
    engines.element,
    scans.element
  )
}
