import type { PromptsResponse as PromptsResponseSchema } from "../../../visibility/Api.js"
import { get } from "../api.js"
import { brandNav } from "./nav.js"
import { formatNumber, h } from "../dom.js"
import { emptyState, errorState, field, navigate, pageHead, rangeField, rangeLabel, rangeOf, section, select } from "../kit.js"
import { INTERVAL_MEANING } from "../intervals.js"
import { engineField, engineOf, rankingQuery, type RankingResponse, regionField, regionOf, scopeWords, shareTable } from "./scope.js"

/**
 * Share of voice of this brand against its competitors, for every prompt or one topic of its prompts,
 * every engine or one, every region or one. State: ?range=30d&topic=<topic>&engine=chatgpt&region=US.
 */

type PromptsResponse = typeof PromptsResponseSchema.Encoded

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

  const engine = engineOf(params)
  const region = regionOf(params)
  void get<RankingResponse>(rankingQuery(slug, range, { engine, region, topic })).then((result) => {
    if (!result.ok) return list.fill(errorState("The ranking", result.error))
    const data = result.value
    heading.textContent = `Ranking · ${data.brand_name}`
    list.fill(
      h(
        "p",
        { class: "muted", id: "ranking-scope" },
        `${formatNumber(data.total_responses)} answers ${data.topic ? `to prompts about “${data.topic}”` : "to all prompts"}, ${rangeLabel(range).toLowerCase()}, ${scopeWords(engine, region)}. ${INTERVAL_MEANING}`
      ),
      data.ranking.length === 0
        ? emptyState(
          topic === "" && engine === "" && region === ""
            ? "No answers in this period yet: the ranking fills in after the first scans."
            : "No answers match these filters in this period.",
          topic === "" ? h("a", { href: `#/brands/${data.brand_slug}/competitors` }, "Add competitors to compare with") : h("a", { href: `#${path}${range === "30d" ? "" : `?range=${range}`}` }, "Show all topics")
        )
        : shareTable(data.ranking, { id: "ranking-table", "aria-label": "Share of voice ranking" }, { sentiment: true })
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
      engineField("ranking-engine", engine, (e) => navigate(path, params, { engine: e })),
      regionField("ranking-region", region, (r) => navigate(path, params, { region: r })),
      field("ranking-topic", "Topic", topicSelect)
    ),
    list.element
  )
}
