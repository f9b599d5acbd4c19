import type { IndustryMetricsResponse, CompetitorPromptsResponse as CompetitorPromptsResponseSchema, CompetitorCitationsResponse as CompetitorCitationsResponseSchema } from "../../../visibility/Api.js"
import { describeError, get, post } from "../api.js"
import { brandNav } from "./nav.js"
import { formatNumber, formatPercent, h } from "../dom.js"
import {
  brandTitle,
  bucketLabel,
  dataTable,
  emptyState,
  engineLabel,
  errorState,
  field,
  navigate,
  pageHead,
  rangeField,
  rangeLabel,
  rangeOf,
  section,
  tableWrap
} from "../kit.js"
import { engineField, engineOf, rankingQuery, type RankingResponse, regionField, regionOf, scopeWords, shareCell, shareChange, shareText } from "./scope.js"

/**
 * The competitors a brand is measured against: who they are and their share of voice (the same read
 * as Ranking and Visibility, GET /industry/ranking, in the same engine and region scope), adding one
 * with its aliases and a pin, and where a competitor appears (its prompts and cited domains, for this
 * brand). State: ?range=30d&engine=chatgpt&region=US&competitor=<name>.
 */

type MetricsResponse = typeof IndustryMetricsResponse.Encoded
type CompetitorPromptsResponse = typeof CompetitorPromptsResponseSchema.Encoded
type CompetitorCitationsResponse = typeof CompetitorCitationsResponseSchema.Encoded

export const competitorsScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/competitors`
  const range = rangeOf(params)
  const selected = params.get("competitor") ?? ""
  const engine = engineOf(params)
  const region = regionOf(params)
  const list = section("Tracked competitors", "competitor-list")
  const status = h("div", { role: "status" })
  const detail = h("div")

  const name = h("input", { type: "text", required: true, maxlength: 200, placeholder: "e.g. Pipedrive" })
  const domain = h("input", { type: "text", required: true, maxlength: 253, placeholder: "e.g. pipedrive.com" })
  const aliases = h("input", { type: "text", maxlength: 1000, placeholder: "e.g. Pipedrive CRM, pipedrive.io" })
  const pinned = h("input", { type: "checkbox", id: "competitor-pinned" })
  const submit = h("button", { type: "submit", id: "add-competitor" }, "Add competitor")

  const refresh = async () => {
    // The names from the brand's metrics (every tracked competitor), the figures from the ranking of the scope.
    const [metrics, ranking] = await Promise.all([
      get<MetricsResponse>(`/api/v1/me/brands/${slug}/industry-metrics?range=${range}`),
      get<RankingResponse>(rankingQuery(slug, range, { engine, region }))
    ])
    if (!metrics.ok) return list.fill(errorState("The competitors", metrics.error))
    if (!ranking.ok) return list.fill(errorState("The competitors' share of voice", ranking.error))
    const rows = new Map(ranking.value.ranking.filter((r) => !r.is_own).map((r) => [r.name.toLowerCase(), r]))
    const own = ranking.value.ranking.find((r) => r.is_own)
    const names = metrics.value.tracked_competitors
    const pinnedFirst = [...names].sort((a, b) =>
      Number(rows.get(b.toLowerCase())?.is_pinned ?? false) - Number(rows.get(a.toLowerCase())?.is_pinned ?? false) ||
      (rows.get(b.toLowerCase())?.mentions ?? 0) - (rows.get(a.toLowerCase())?.mentions ?? 0) ||
      a.localeCompare(b)
    )
    const detailHref = (competitor: string) =>
      `#${path}?${new URLSearchParams({ ...Object.fromEntries(params.entries()), competitor }).toString()}`
    list.fill(
      names.length === 0
        ? emptyState(
          "No competitors yet: share of voice, the gap report and the ranking compare your brand with the competitors you add here.",
          "Add the two or three brands your customers compare you with, using the form above."
        )
        : h(
          "div",
          null,
          h(
            "p",
            { class: "muted", id: "competitors-scope" },
            `${formatNumber(ranking.value.total_responses)} answers, ${rangeLabel(range).toLowerCase()}, ${scopeWords(engine, region)}.`,
            own ? ` ${own.name} (you): ${shareText(own.share, own.share_ci95)}.` : null
          ),
          tableWrap(h(
            "table",
            { id: "competitors-table", class: "share-table", "aria-label": "Tracked competitors" },
            h("thead", null, h("tr", null,
              h("th", { scope: "col" }, "Competitor"),
              h("th", { class: "opt", scope: "col" }, "Domain"),
              h("th", { class: "num opt", scope: "col" }, "Mentions"),
              h("th", { class: "num", scope: "col" }, "Share of voice (95% interval)"),
              h("th", { class: "num", scope: "col" }, "Change"),
              h("th", { scope: "col" }, ""))),
            h("tbody", null, pinnedFirst.map((competitor) => {
              const row = rows.get(competitor.toLowerCase())
              return h(
                "tr",
                { "data-brand": competitor },
                h("td", null, competitor, row?.is_pinned ? h("span", { class: "badge active", title: "Pinned competitor" }, " pinned") : null),
                h("td", { class: "opt" }, row?.domain ?? "—"),
                h("td", { class: "num opt" }, row ? formatNumber(row.mentions) : "—"),
                h("td", { class: "num", "data-share": "" }, row ? shareCell(row.share, row.share_ci95) : "—"),
                h("td", { class: "num" }, row ? shareChange(row) : "—"),
                h("td", null, h("a", { href: detailHref(competitor) }, `Where ${competitor} appears`))
              )
            }))
          ))
        )
    )
  }

  const showDetail = async () => {
    if (selected === "") return
    const card = section(`Where ${selected} appears`, "competitor-detail")
    detail.replaceChildren(card.element)
    const name = encodeURIComponent(selected)
    const [prompts, citations] = await Promise.all([
      get<CompetitorPromptsResponse>(`/api/v1/me/industry/competitors/${name}/prompts?range=${range}&brand=${encodeURIComponent(slug)}`),
      get<CompetitorCitationsResponse>(`/api/v1/me/industry/competitors/${name}/citations?range=${range}&brand=${encodeURIComponent(slug)}`)
    ])
    card.fill(
      h("h3", null, "Prompts where it is named"),
      !prompts.ok
        ? errorState(`The prompts naming ${selected}`, prompts.error)
        : prompts.value.prompts.length === 0
        ? emptyState(`${selected} was not named in any answer in this period.`)
        : dataTable(
          ["Prompt", "Topic", "Answers naming it", "Also naming you", "Average rank", "Engines"],
          prompts.value.prompts.map((p) => [p.prompt, p.topic || "—", formatNumber(p.appearances), formatNumber(p.brand_mentioned), p.avg_rank.toFixed(1), p.engines.length > 3 ? h("span", { title: p.engines.map(engineLabel).join(", ") }, `${p.engines.length} engines`) : p.engines.map(engineLabel).join(", ")]),
          [2, 3, 4],
          { "aria-label": `Prompts naming ${selected}` }
        ),
      h("h3", null, "Domains cited beside it"),
      !citations.ok
        ? errorState(`The domains cited with ${selected}`, citations.error)
        : citations.value.domains.length === 0
        ? emptyState(`No answer naming ${selected} cited a source in this period.`)
        : dataTable(
          ["Domain", "Type", "Citations", "Share"],
          citations.value.domains.map((d) => [d.domain, bucketLabel(d.bucket), formatNumber(d.citations), formatPercent(d.share)]),
          [2, 3],
          { "aria-label": `Domains cited beside ${selected}` }
        )
    )
  }

  const form = h(
    "form",
    {
      class: "form-row",
      onsubmit: async (event: Event) => {
        event.preventDefault()
        if (name.value.trim() === "" || domain.value.trim() === "") return
        submit.disabled = true
        const result = await post<{ name: string }>(`/api/v1/me/brands/${slug}/competitors`, {
          name: name.value.trim(),
          domain: domain.value.trim(),
          aliases: aliases.value.split(",").map((a) => a.trim()).filter((a) => a !== ""),
          pinned: pinned.checked
        })
        submit.disabled = false
        if (!result.ok) {
          const sentence = result.error.status === 409
            ? `${name.value.trim()} is already a competitor of this brand.`
            : `The competitor was not added. ${describeError(result.error)}`
          return status.replaceChildren(h("div", { class: "error", role: "alert" }, sentence))
        }
        name.value = domain.value = aliases.value = ""
        pinned.checked = false
        status.replaceChildren(h("div", { class: "success" }, `Added ${result.value.name}. Its mentions are counted from the next scan on.`))
        await refresh()
      }
    },
    field("competitor-name", "Name", name),
    field("competitor-domain", "Domain", domain),
    h("div", { class: "field grow" }, h("label", { for: "competitor-aliases" }, "Other names (optional)"), Object.assign(aliases, { id: "competitor-aliases" }),
      h("span", { class: "hint", id: "competitor-aliases-hint" }, "Separate them with commas: answers naming any of them count for this competitor.")),
    h("div", { class: "field" }, h("label", { for: "competitor-pinned" }, pinned, " Pin to the top")),
    h("div", { class: "field" }, h("span", { "aria-hidden": "true" }, " "), submit)
  )
  aliases.setAttribute("aria-describedby", "competitor-aliases-hint")

  void refresh()
  void showDetail()
  return h(
    "div",
    { id: "competitors-screen" },
    brandNav(slug, "competitors"),
    pageHead(brandTitle(slug, h("h1"), (n) => `Competitors · ${n}`), "The brands your brand is compared with in AI answers."),
    h("section", { class: "card", "aria-labelledby": "add-competitor-title" }, h("h2", { id: "add-competitor-title" }, "Add a competitor"), form, status),
    h(
      "div",
      { class: "form-row card", role: "group", "aria-label": "Filters" },
      rangeField("competitors-range", range, (r) => navigate(path, params, { range: r === "30d" ? null : r })),
      engineField("competitors-engine", engine, (e) => navigate(path, params, { engine: e })),
      regionField("competitors-region", region, (r) => navigate(path, params, { region: r }))
    ),
    list.element,
    detail
  )
}
