import { describeError, get, post } from "../api.js"
import { brandNav } from "./nav.js"
import { formatNumber, formatPercent, h } from "../dom.js"
import {
  brands,
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
  section
} from "./kit.js"

/**
 * The competitors a brand is measured against: who they are (from the share-of-voice read of the
 * brand), adding one with its aliases and a pin, and for the primary brand where a competitor
 * appears (its prompts and cited domains). State: ?range=30d&competitor=<name>.
 */

interface RankingRow {
  readonly name: string
  readonly mentions: number
  readonly share: number
  readonly is_own: boolean
  readonly is_pinned: boolean
  readonly domain: string
}
interface MetricsResponse {
  readonly brand_slug: string
  readonly ranking: ReadonlyArray<RankingRow>
  readonly tracked_competitors: ReadonlyArray<string>
}
interface CompetitorPromptsResponse {
  readonly prompts: ReadonlyArray<{
    readonly prompt: string
    readonly topic: string
    readonly appearances: number
    readonly engines: ReadonlyArray<string>
    readonly avg_rank: number
    readonly brand_mentioned: number
  }>
}
interface CompetitorCitationsResponse {
  readonly domains: ReadonlyArray<{ readonly domain: string; readonly citations: number; readonly share: number; readonly bucket: string }>
  readonly total_citations: number
}

/** The primary brand (the earliest added): the one the competitor reads of the API answer for. */
const primarySlug = async () => {
  const list = await brands()
  const first = [...list].sort((a, b) => a.added_at.localeCompare(b.added_at) || a.id - b.id)[0]
  return first?.brand_slug ?? null
}

export const competitorsScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/competitors`
  const range = rangeOf(params)
  const selected = params.get("competitor") ?? ""
  const list = section("Tracked competitors", "competitor-list")
  const status = h("div", { role: "status" })
  const detail = h("div")

  const name = h("input", { type: "text", required: true, maxlength: 200, placeholder: "e.g. Pipedrive" })
  const domain = h("input", { type: "text", required: true, maxlength: 253, placeholder: "e.g. pipedrive.com" })
  const aliases = h("input", { type: "text", maxlength: 1000, placeholder: "e.g. Pipedrive CRM, pipedrive.io" })
  const pinned = h("input", { type: "checkbox", id: "competitor-pinned" })
  const submit = h("button", { type: "submit", id: "add-competitor" }, "Add competitor")

  const refresh = async () => {
    const result = await get<MetricsResponse>(`/api/v1/me/brands/${slug}/industry-metrics?range=${range}`)
    if (!result.ok) return list.fill(errorState("The competitors", result.error))
    const rows = new Map(result.value.ranking.filter((r) => !r.is_own).map((r) => [r.name.toLowerCase(), r]))
    const names = result.value.tracked_competitors
    const pinnedFirst = [...names].sort((a, b) =>
      Number(rows.get(b.toLowerCase())?.is_pinned ?? false) - Number(rows.get(a.toLowerCase())?.is_pinned ?? false) ||
      (rows.get(b.toLowerCase())?.mentions ?? 0) - (rows.get(a.toLowerCase())?.mentions ?? 0) ||
      a.localeCompare(b)
    )
    list.fill(
      names.length === 0
        ? emptyState(
          "No competitors yet: share of voice, the gap report and the ranking compare your brand with the competitors you add here.",
          "Add the two or three brands your customers compare you with, using the form above."
        )
        : dataTable(
          ["Competitor", "Domain", `Mentions (${rangeLabel(range).toLowerCase()})`, "Share of voice", ""],
          pinnedFirst.map((competitor) => {
            const row = rows.get(competitor.toLowerCase())
            return [
              h("span", null, competitor, row?.is_pinned ? h("span", { class: "badge active", title: "Pinned competitor" }, " pinned") : null),
              row?.domain ?? "—",
              row ? formatNumber(row.mentions) : "—",
              row ? formatPercent(row.share) : "—",
              h("a", { href: `#${path}?competitor=${encodeURIComponent(competitor)}${range === "30d" ? "" : `&range=${range}`}` }, `Where ${competitor} appears`)
            ]
          }),
          [2, 3],
          { id: "competitors-table", "aria-label": "Tracked competitors" }
        )
    )
  }

  const showDetail = async () => {
    if (selected === "") return
    const card = section(`Where ${selected} appears`, "competitor-detail")
    detail.replaceChildren(card.element)
    const primary = await primarySlug()
    if (primary !== slug) {
      return card.fill(h("p", { class: "notice" }, "Where a competitor appears is measured for your primary brand (the first one you added)",
        primary ? [". ", h("a", { href: `#/brands/${primary}/competitors?competitor=${encodeURIComponent(selected)}` }, "Open it there")] : null, "."))
    }
    const name = encodeURIComponent(selected)
    const [prompts, citations] = await Promise.all([
      get<CompetitorPromptsResponse>(`/api/v1/me/industry/competitors/${name}/prompts?range=${range}`),
      get<CompetitorCitationsResponse>(`/api/v1/me/industry/competitors/${name}/citations?range=${range}`)
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
    h("div", { class: "form-row card" }, rangeField("competitors-range", range, (r) => navigate(path, params, { range: r === "30d" ? null : r }))),
    list.element,
    detail
  )
}
