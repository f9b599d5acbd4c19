import { get } from "../api.js"
import { brandNav } from "./nav.js"
import { formatNumber, formatPercent, h } from "../dom.js"
import { dataTable, emptyState, errorState, field, navigate, pageHead, rangeField, rangeLabel, rangeOf, section, select } from "./kit.js"
import { intervalEnds, INTERVAL_MEANING } from "../intervals.js"

/**
 * Share of voice of this brand against its competitors, for every prompt or one topic of its prompts.
 * State: ?range=30d&topic=<topic>.
 */

interface Row {
  readonly name: string
  readonly mentions: number
  readonly share: number
  readonly delta: number
  readonly is_own: boolean
  readonly is_pinned: boolean
  readonly sentiment: { readonly pos: number; readonly neu: number; readonly neg: number }
  readonly share_ci95: readonly [number, number] | null
  readonly significant: boolean
}
interface RankingResponse {
  readonly brand_slug: string
  readonly brand_name: string
  readonly topic: string | null
  readonly total_responses: number
  readonly ranking: ReadonlyArray<Row>
}
interface PromptsResponse {
  readonly prompts: ReadonlyArray<{ readonly topic: string }>
}

const points = (value: number) => `${value >= 0 ? "+" : "−"}${Math.abs(value * 100).toFixed(1)} pt`

export const rankingScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/ranking`
  const range = rangeOf(params)
  const topic = params.get("topic") ?? ""
  const list = section("Share of voice", "ranking")
  const heading = h("h1", null, "Ranking")
  const topicSelect = select([["", "All topics"]], topic)
  if (topic !== "") topicSelect.append(h("option", { value: topic, selected: true }, topic))
  topicSelect.addEventListener("change", () => navigate(path, params, { topic: topicSelect.value }))

  // The topics of this brand's prompts (the ranking filters the brand's answers by them).
  void get<PromptsResponse>(`/api/v1/me/brands/${slug}/prompts`).then((result) => {
    if (!result.ok) return
    const themes = [...new Set(result.value.prompts.map((p) => p.topic))].sort()
    if (topic !== "" && !themes.includes(topic)) themes.push(topic)
    topicSelect.replaceChildren(h("option", { value: "" }, "All topics"), ...themes.map((t) => h("option", { value: t, selected: t === topic }, t)))
  })

  const query = new URLSearchParams({ range })
  if (topic !== "") query.set("topic", topic)
  void get<RankingResponse>(`/api/v1/me/industry/ranking?${query.toString()}&brand=${encodeURIComponent(slug)}`).then((result) => {
    if (!result.ok) return list.fill(errorState("The ranking", result.error))
    const data = result.value
    heading.textContent = `Ranking · ${data.brand_name}`
    list.fill(
      h("p", { class: "muted" }, `${formatNumber(data.total_responses)} answers ${data.topic ? `to prompts about “${data.topic}”` : "to all prompts"}, ${rangeLabel(range).toLowerCase()}. ${INTERVAL_MEANING}`),
      data.ranking.length === 0
        ? emptyState(
          topic === "" ? "No answers in this period yet: the ranking fills in after the first scans." : "No answers to prompts of this topic in this period.",
          topic === "" ? h("a", { href: `#/brands/${data.brand_slug}/competitors` }, "Add competitors to compare with") : h("a", { href: `#${path}${range === "30d" ? "" : `?range=${range}`}` }, "Show all topics")
        )
        : dataTable(
          ["#", "Brand", "Mentions", "Share of voice", "Change", "Positive", "Negative"],
          data.ranking.map((row, i) => [
            String(i + 1),
            h("span", null, row.is_own ? h("strong", null, `${row.name} (you)`) : row.name, row.is_pinned ? h("span", { class: "badge active" }, " pinned") : null),
            formatNumber(row.mentions),
            formatPercent(row.share) + intervalEnds(row.share_ci95, 100),
            row.significant ? points(row.delta) : h("span", { class: "muted", title: "Within sampling noise" }, `${points(row.delta)} (not significant)`),
            formatPercent(row.sentiment.pos),
            formatPercent(row.sentiment.neg)
          ]),
          [0, 2, 3, 4, 5, 6],
          { id: "ranking-table", "aria-label": "Share of voice ranking" }
        )
    )
  })

  return h(
    "div",
    { id: "ranking-screen" },
    brandNav(slug, "ranking"),
    pageHead(heading, "Who AI answers name most often: your brand and its competitors."),
    h(
      "div",
      { class: "form-row card", role: "group", "aria-label": "Filters" },
      rangeField("ranking-range", range, (r) => navigate(path, params, { range: r === "30d" ? null : r })),
      field("ranking-topic", "Topic", topicSelect)
    ),
    list.element
  )
}
