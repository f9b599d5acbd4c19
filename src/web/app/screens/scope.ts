import type { IndustryRankingResponse } from "../../../visibility/Api.js"
import { formatNumber, formatPercent, h } from "../dom.js"
import { intervalEnds } from "../intervals.js"
import { ENGINE_LABELS, field, select, tableWrap } from "../kit.js"

/**
 * The scope of a share of voice, the same on every screen that shows one (Visibility, Ranking,
 * Competitors): an engine (empty = every engine) and a region (empty = every region and language),
 * both in the hash query (?engine=chatgpt&region=US) and applied on change. Every such screen reads
 * GET /industry/ranking, so the same brand, period and scope give the same figures everywhere
 * (docs/visibility.md, "Share of voice in the web application").
 */

export const REGIONS = ["US", "GB", "CA", "AU", "IE", "IN", "DE", "FR", "ES", "IT", "NL", "BR", "MX", "JP"]

export const engineOf = (params: URLSearchParams) => params.get("engine") ?? ""
export const regionOf = (params: URLSearchParams) => (params.get("region") ?? "").toUpperCase()

/** The engine filter: every engine, or one of the nine, by its human name. */
export const engineField = (id: string, engine: string, onChange: (engine: string) => void) => {
  const control = select([["", "All engines"], ...Object.entries(ENGINE_LABELS)], engine)
  if (engine !== "" && ENGINE_LABELS[engine] === undefined) control.append(h("option", { value: engine, selected: true }, engine))
  control.addEventListener("change", () => onChange(control.value))
  return field(id, "Engine", control)
}

/** The region filter: every region (and language), or one region. */
export const regionField = (id: string, region: string, onChange: (region: string) => void) => {
  const control = select([["", "All regions"], ...REGIONS.map((r) => [r, r] as const)], region)
  if (region !== "" && !REGIONS.includes(region)) control.append(h("option", { value: region, selected: true }, region))
  control.addEventListener("change", () => onChange(control.value))
  return field(id, "Region", control)
}

/** The query of GET /industry/ranking for a brand, period, topic and scope. */
export const rankingQuery = (slug: string, range: string, scope: { readonly engine: string; readonly region: string; readonly topic?: string }) => {
  const query = new URLSearchParams({ range, brand: slug })
  if (scope.topic) query.set("topic", scope.topic)
  if (scope.engine !== "") query.set("engine", scope.engine)
  if (scope.region !== "") query.set("region", scope.region)
  return `/api/v1/me/industry/ranking?${query.toString()}`
}

/** What a share counts, in words: "ChatGPT, every region" / "every engine, region US". */
export const scopeWords = (engine: string, region: string) =>
  `${engine === "" ? "every engine" : ENGINE_LABELS[engine] ?? engine}, ${region === "" ? "every region and language" : `region ${region} (every language)`}`

/** A share with its 95% interval: "22.1% (18.0–26.5%)". */
export const shareText = (share: number, interval: readonly [number, number] | null | undefined) => {
  const ends = intervalEnds(interval, 100)
  return formatPercent(share) + (ends === "" ? "" : ends.replace(/\)$/, "%)"))
}

/** The same as a cell's content: the interval may wrap below the share on a phone (the text stays the same). */
export const shareCell = (share: number, interval: readonly [number, number] | null | undefined) => {
  const text = shareText(share, interval)
  const cut = text.indexOf(" (")
  return cut < 0 ? text : h("span", null, h("span", { class: "share" }, text.slice(0, cut)), " ", h("span", { class: "ends" }, text.slice(cut + 1)))
}

const signedPoints = (value: number) => `${value >= 0 ? "+" : "−"}${Math.abs(value * 100).toFixed(1)} pt`

/**
 * A share's change against the previous period: "new" without answers before, the signed change
 * otherwise, marked "(n.s.)" when its 95% interval includes 0.
 */
export const shareChange = (row: { readonly share: number; readonly delta: number; readonly delta_ci95: readonly [number, number] | null; readonly significant: boolean }) => {
  if (row.delta_ci95 === null) return h("span", { class: "muted", title: "no answers in the previous period" }, "new")
  const text = signedPoints(row.delta)
  return row.significant
    ? h("span", { "data-change": "" }, text)
    : h("span", { class: "muted", "data-change": "", title: `not significant: the 95% interval [${signedPoints(row.delta_ci95[0])}, ${signedPoints(row.delta_ci95[1])}] includes 0` }, `${text} (n.s.)`)
}

/** GET /industry/ranking (docs/visibility.md): one row per entity. */
export type ShareRow = RankingResponse["ranking"][number]
export type RankingResponse = typeof IndustryRankingResponse.Encoded

/**
 * The share-of-voice table: a row per brand (`data-brand` = its name), its share with the 95% interval
 * (`data-share` cell), the change with its n.s. marker and, when asked, the sentiment shares.
 */
export const shareTable = (rows: ReadonlyArray<ShareRow>, attrs: Record<string, string>, options: { readonly sentiment?: boolean } = {}) => {
  // Columns marked "opt" give way on a phone (style.css), so the share and its change stay in view.
  const headers: ReadonlyArray<readonly [string, string | null]> = [
    ["#", "num opt"],
    ["Brand", null],
    ["Mentions", "num opt"],
    ["Share of voice (95% interval)", "num"],
    ["Change", "num"],
    ...(options.sentiment ? [["Positive", "num opt"], ["Negative", "num opt"]] as const : [])
  ]
  return tableWrap(h(
    "table",
    { ...attrs, class: "share-table" },
    h("thead", null, h("tr", null, headers.map(([name, cls]) => h("th", { class: cls, scope: "col" }, name)))),
    h(
      "tbody",
      null,
      rows.map((row, i) =>
        h(
          "tr",
          { "data-brand": row.name },
          h("td", { class: "num opt" }, String(i + 1)),
          h("td", null, row.is_own ? h("strong", null, `${row.name} (you)`) : row.name, row.is_pinned ? h("span", { class: "badge active" }, " pinned") : null),
          h("td", { class: "num opt" }, formatNumber(row.mentions)),
          h("td", { class: "num", "data-share": "" }, shareCell(row.share, row.share_ci95)),
          h("td", { class: "num" }, shareChange(row)),
          options.sentiment ? h("td", { class: "num opt" }, formatPercent(row.sentiment.pos)) : null,
          options.sentiment ? h("td", { class: "num opt" }, formatPercent(row.sentiment.neg)) : null
        )
      )
    )
  ))
}
