import { get, type ModelResponse, type ScanStatusResponse, type SnapshotsResponse } from "./api.js"
import { unavailable } from "./agents.js"
import { brandNav } from "./screens/nav.js"
import { chart, PALETTE } from "./charts.js"
import { append, clear, formatDate, formatNumber, formatPercent, h } from "./dom.js"
import { engineLabel, RANGES, rangeLabel } from "./labels.js"
import { INTERVAL_MEANING, intervalEnds } from "./intervals.js"
import { brandTitle, emptyState, field, loadingState, navigate, rangeOf, select, tableWrap } from "./kit.js"
import { engineField, engineOf, rankingQuery, type RankingResponse, regionField, regionOf, scopeWords, shareTable } from "./screens/scope.js"

/** How AI answer engines talk about one brand: daily snapshots, share of voice, engines. */

const section = (title: string, id: string) => {
  const body = h("div", null, loadingState())
  return { body, element: h("section", { class: "card", id, "aria-labelledby": `${id}-title` }, h("h2", { id: `${id}-title` }, title), body) }
}

const signed = (value: number, digits = 1) => `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`


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

/** " (refused 1, blocked 2)": why calls failed, or "" when none did. */
const byReason = (reasons: Readonly<Record<string, number>> | undefined) => {
  const entries = Object.entries(reasons ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return entries.length === 0 ? "" : ` (${entries.map(([reason, n]) => `${reason.replace(/_/g, " ")} ${n}`).join(", ")})`
}

export const visibilityPage = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/visibility`
  const range = rangeOf(params)
  const engine = engineOf(params)
  const region = regionOf(params)
  const query = `range=${encodeURIComponent(range)}`
  const rangeSelect = select(RANGES.map((r) => [r, rangeLabel(r)] as const), range)
  rangeSelect.addEventListener("change", () => navigate(path, params, { range: rangeSelect.value === "30d" ? null : rangeSelect.value }))
  const noAnswers = () =>
    emptyState(
      `No answers from AI engines for this brand in the ${rangeLabel(range).toLowerCase()} yet. They appear after the next scan of your monitored prompts, or once you import answers.`,
      h("a", { href: `#/start?brand=${slug}` }, "See what to set up"),
      range !== "90d" ? h("a", { href: `#/brands/${slug}/visibility?range=90d` }, "Look at the last 90 days") : null
    )
  const legendSide = window.innerWidth < 600 ? "bottom" : "right"
  const snapshots = section("Daily snapshots", "snapshots")
  const share = section("Share of voice", "share-of-voice")
  const shareScope = h("p", { class: "muted", id: "share-scope" })
  const engines = section("Engines", "engines")

  void get<SnapshotsResponse>(`/api/v1/me/brands/${slug}/snapshots?${query}`).then((result) => {
    clear(snapshots.body)
    if (!result.ok) return append(snapshots.body, [unavailable(result.error, "Snapshots")])
    const rows = result.value.snapshots
    append(snapshots.body, [
      rows.length === 0
        ? noAnswers()
        : chart("Mention rate and citation rate per day", {
          type: "line",
          data: {
            labels: rows.map((row) => new Date(`${row.date}T00:00:00Z`).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" })),
            datasets: [
              { label: "Mention rate", data: rows.map((row) => row.total_responses === 0 ? 0 : row.brand_mentions / row.total_responses), borderColor: PALETTE[0]!, backgroundColor: PALETTE[0]! },
              // The 95% band of the mention rate: its two edges, dashed.
              { label: "95% low", data: rows.map((row) => row.mention_rate_ci95?.[0] ?? null), borderColor: PALETTE[0]!, borderDash: [4, 4], borderWidth: 1, pointRadius: 0 },
              { label: "95% high", data: rows.map((row) => row.mention_rate_ci95?.[1] ?? null), borderColor: PALETTE[0]!, borderDash: [4, 4], borderWidth: 1, pointRadius: 0 },
              { label: "Citation rate", data: rows.map((row) => row.citation_rate), borderColor: PALETTE[1]!, backgroundColor: PALETTE[1]! },
              { label: "Sentiment (−1 to 1)", data: rows.map((row) => row.sentiment_avg), borderColor: PALETTE[2]!, backgroundColor: PALETTE[2]! }
            ]
          },
          options: { scales: { x: { ticks: { maxRotation: 0, autoSkip: true } }, y: { suggestedMin: 0, suggestedMax: 1 } }, plugins: { legend: { position: "bottom" } } }
        }, 300)
    ])
  })

  // The same read as the Ranking screen (GET /industry/ranking), so both say the same for the same scope.
  void get<RankingResponse>(rankingQuery(slug, range, { engine, region })).then((result) => {
    clear(share.body)
    if (!result.ok) return append(share.body, [unavailable(result.error, "Share of voice")])
    const ranking = result.value.ranking
    shareScope.textContent =
      `${formatNumber(result.value.total_responses)} answers to all prompts, ${rangeLabel(range).toLowerCase()}, ${scopeWords(engine, region)}: ` +
      "each brand's mentions over the mentions of the brand and its competitors. The change compares with the period before."
    append(share.body, [
      shareScope,
      ranking.length === 0
        ? h("p", { class: "empty" }, engine === "" && region === ""
          ? "No brand or competitor was mentioned in this range yet: share of voice appears with the first answers that name one."
          : "No brand or competitor was mentioned in answers matching these filters in this range.")
        : h(
          "div",
          { class: "grid2" },
          chart("Share of voice", {
            type: "doughnut",
            data: { labels: ranking.map((row) => row.name), datasets: [{ data: ranking.map((row) => row.share), backgroundColor: PALETTE }] },
            options: { plugins: { legend: { position: legendSide } } }
          }),
          shareTable(ranking, { id: "share-table", "aria-label": "Share of voice" })
        )
    ])
  })

  void get<ModelResponse>(`/api/v1/me/brands/${slug}/model?${query}`).then((result) => {
    clear(engines.body)
    if (!result.ok) return append(engines.body, [unavailable(result.error, "Engine performance")])
    const rows = result.value.engines
    append(engines.body, [
      rows.length === 0
        ? noAnswers()
        : h(
          "div",
          null,
          chart("AI presence score per engine", {
            type: "bar",
            data: {
              labels: rows.map((row) => engineLabel(row.engine)),
              datasets: [
                { label: "Score (0–100)", data: rows.map((row) => row.score), backgroundColor: PALETTE[0]! },
                // The 95% interval as a thin floating bar beside each score (an error bar).
                { label: "95% interval", data: rows.map((row) => row.score_ci95 == null ? null : [row.score_ci95[0], row.score_ci95[1]]), backgroundColor: PALETTE[3]!, barPercentage: 0.25 }
              ]
            },
            options: { scales: { x: { ticks: { autoSkip: false, maxRotation: 60 } }, y: { beginAtZero: true, suggestedMax: 100 } }, plugins: { legend: { position: "bottom" } } }
          }),
          tableWrap(h(
            "table",
            { "aria-label": "Engines" },
            h("thead", null, h("tr", null, h("th", { scope: "col" }, "Engine"), h("th", { class: "num", scope: "col" }, "Answers"), h("th", { class: "num", scope: "col" }, "Score"), h("th", { class: "num", scope: "col" }, "Change"))),
            h(
              "tbody",
              null,
              rows.map((row) =>
                h(
                  "tr",
                  null,
                  h("td", null, engineLabel(row.engine)),
                  h("td", { class: "num" }, row.n === undefined ? "" : formatNumber(row.n)),
                  h("td", { class: "num" }, (row.n === 0 ? "–" : row.score.toFixed(1)) + (row.n === 0 ? "" : intervalEnds(row.score_ci95, 1))),
                  h("td", { class: "num" }, row.n === 0 ? h("span", { class: "muted" }, "no answers") : change(row.delta, row.delta_ci95 === null, row.delta_ci95, row.significant, 1, " pt"))
                )
              )
            )
          ))
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
        ? emptyState(
          "No scan has run for this brand yet. Ask for one now, or import answers you collected elsewhere, on the brand's Settings.",
          h("a", { href: `#/brands/${slug}/settings` }, "Scan now or import answers")
        )
        : tableWrap(h(
          "table",
          { "aria-label": "Last scan per engine" },
          h("thead", null, h("tr", null, h("th", { scope: "col" }, "Engine"), h("th", { scope: "col" }, "Scanned"), h("th", { class: "num", scope: "col" }, "Answers stored"), h("th", { class: "num", scope: "col" }, "Failed"), h("th", { scope: "col" }, "Status"))),
          h(
            "tbody",
            null,
            rows.map((row) =>
              h(
                "tr",
                null,
                h("td", null, engineLabel(row.engine)),
                h("td", null, formatDate(row.scanned_at)),
                h("td", { class: "num" }, formatNumber(row.observations)),
                h("td", { class: "num" }, formatNumber(row.failures) + byReason(row.failures_by_reason)),
                h("td", null, row.last_error === null ? "OK" : h("span", { class: "muted" }, `Failed: ${row.last_error}`))
              )
            )
          )
        ))
    ])
  })

  return h(
    "div",
    { id: "visibility-page" },
    brandNav(slug, "visibility"),
    brandTitle(slug, h("h1"), (name) => `Visibility in AI answers · ${name}`),
    h("p", { class: "muted" }, "How often AI answer engines mention this brand and its competitors, with 95% intervals: a change marked n.s. is within the noise."),
    h("p", { class: "muted", id: "interval-meaning" }, INTERVAL_MEANING),
    h(
      "div",
      { class: "form-row card", role: "group", "aria-label": "Filters" },
      field("visibility-range", "Period", rangeSelect),
      engineField("visibility-engine", engine, (e) => navigate(path, params, { engine: e })),
      regionField("visibility-region", region, (r) => navigate(path, params, { region: r }))
    ),
    h("p", { class: "muted", id: "visibility-scope-note" }, "The engine and region filters apply to the share of voice; the daily snapshots and the engines table count every engine and region."),
    snapshots.element,
    share.element,
    engines.element,
    scans.element
  )
}
