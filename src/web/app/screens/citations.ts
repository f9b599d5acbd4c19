import type { CitationsResponse as CitationsResponseSchema, GapResponse as GapResponseSchema, PromptsResponse as PromptsResponseSchema } from "../../../visibility/Api.js"
import { get } from "../api.js"
import { brandNav } from "./nav.js"
import { formatNumber, formatPercent, h } from "../dom.js"
import {
  BUCKET_LABELS,
  bucketLabel,
  dataTable,
  emptyState,
  errorState,
  field,
  navigate,
  pageHead,
  rangeField,
  rangeLabel,
  rangeOf,
  section,
  select,
  tableWrap
} from "../kit.js"
import { REGIONS } from "./scope.js"

/**
 * The sources AI answers about this brand cite and its gap report: domains cited beside its
 * competitors but never beside the brand, for every prompt or one topic of its prompts.
 * State: ?range=30d&type=<bucket>&region=US&topic=<topic>.
 */

type CitationsResponse = typeof CitationsResponseSchema.Encoded
type GapResponse = typeof GapResponseSchema.Encoded
type PromptsResponse = typeof PromptsResponseSchema.Encoded

export const citationsScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/citations`
  const range = rangeOf(params)
  const type = params.get("type") ?? ""
  const region = (params.get("region") ?? "").toUpperCase()
  const topic = params.get("topic") ?? ""
  const brand = encodeURIComponent(slug)
  const citations = section("Most cited sources", "citations", "Every answer about this brand.")
  const gap = section("Gap report", "gap")

  const typeSelect = select([["", "All types"], ...Object.entries(BUCKET_LABELS)], type)
  typeSelect.addEventListener("change", () => navigate(path, params, { type: typeSelect.value }))
  const regionSelect = select([["", "All regions"], ...REGIONS.map((r) => [r, r] as const)], region)
  if (region !== "" && !REGIONS.includes(region)) regionSelect.append(h("option", { value: region, selected: true }, region))
  regionSelect.addEventListener("change", () => navigate(path, params, { region: regionSelect.value }))
  const topicSelect = select([["", "All topics"]], topic)
  if (topic !== "") topicSelect.append(h("option", { value: topic, selected: true }, topic))
  topicSelect.addEventListener("change", () => navigate(path, params, { topic: topicSelect.value }))
  // The topics of this brand's prompts (the gap report filters its answers by them).
  void get<PromptsResponse>(`/api/v1/me/brands/${slug}/prompts`).then((result) => {
    if (!result.ok) return
    const topics = [...new Set(result.value.prompts.map((p) => p.topic))].sort()
    if (topic !== "" && !topics.includes(topic)) topics.push(topic)
    topicSelect.replaceChildren(h("option", { value: "" }, "All topics"), ...topics.map((t) => h("option", { value: t, selected: t === topic }, t)))
  })

  void get<CitationsResponse>(`/api/v1/me/citations?range=${range}&brand=${brand}`).then((result) => {
    if (!result.ok) return citations.fill(errorState("The cited sources", result.error))
    const shown = type === "" ? result.value.domains : result.value.domains.filter((d) => d.bucket === type)
    citations.fill(
      h("p", { class: "muted" }, `${formatNumber(result.value.total_citations)} citations in answers, ${rangeLabel(range).toLowerCase()}.`),
      h("div", { class: "form-row" }, field("citations-type", "Type of source", typeSelect)),
      shown.length === 0
        ? emptyState(
          result.value.domains.length === 0
            ? "No answer cited a source in this period. Citations appear after the first scans of your prompts."
            : "No cited source is of this type in this period.",
          result.value.domains.length === 0 ? h("a", { href: `#/brands/${slug}/prompts` }, "Check your monitored prompts") : h("a", { href: `#${path}?range=${range}` }, "Show every type")
        )
        : dataTable(
          ["Domain", "Type", "Citations", "Share"],
          shown.map((d) => [d.domain, bucketLabel(d.bucket), formatNumber(d.citations), formatPercent(d.share)]),
          [2, 3],
          { id: "citations-table", "aria-label": "Most cited sources" }
        )
    )
  })

  const gapQuery = new URLSearchParams({ range, brand: slug })
  if (region !== "") gapQuery.set("region", region)
  if (topic !== "") gapQuery.set("topic", topic)
  void get<GapResponse>(`/api/v1/me/industry/gap?${gapQuery.toString()}`).then((result) => {
    if (!result.ok) return gap.fill(errorState("The gap report", result.error))
    gap.fill(
      h(
        "p",
        { class: "muted" },
        "Sources that cite your competitors but never your brand: the first places to earn a mention",
        topic === "" ? "." : ` (answers to prompts about “${topic}”).`
      ),
      h("div", { class: "form-row" }, field("gap-region", "Region", regionSelect), field("gap-topic", "Topic", topicSelect)),
      result.value.domains.length === 0
        ? emptyState(
          topic === ""
            ? "No gap in this period: every source citing a competitor also cited your brand, or no competitor was cited yet."
            : "No gap for this topic in this period: every source citing a competitor also cited your brand, or no competitor was cited yet.",
          h("a", { href: `#/brands/${slug}/competitors` }, "Review your competitors")
        )
        : tableWrap(h(
          "table",
          { id: "gap-table", "aria-label": "Gap report" },
          h("thead", null, h("tr", null,
            h("th", { scope: "col" }, "Domain"),
            h("th", { scope: "col" }, "Type"),
            h("th", { class: "num", scope: "col" }, "Answers naming a competitor that cite it"),
            h("th", { scope: "col" }, "Competitors seen with it"))),
          h("tbody", null, result.value.domains.map((d) =>
            h(
              "tr",
              { "data-gap-domain": d.domain },
              h("td", null, d.domain),
              h("td", null, bucketLabel(d.bucket)),
              h("td", { class: "num" }, formatNumber(d.opportunity)),
              h("td", null, d.competitors.join(", "))
            )))
        ))
    )
  })

  return h(
    "div",
    { id: "citations-screen" },
    brandNav(slug, "citations"),
    pageHead(h("h1", null, "Citations and gaps"), "Which websites AI answers rely on, and where your competitors are cited without you."),
    h("div", { class: "form-row card" }, rangeField("citations-range", range, (r) => navigate(path, params, { range: r === "30d" ? null : r }))),
    citations.element,
    gap.element
  )
}
