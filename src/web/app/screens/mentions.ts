import type { MentionsResponse as MentionsResponseSchema } from "../../../visibility/Api.js"
import { get } from "../api.js"
import { brandNav } from "./nav.js"
import { formatDate, h } from "../dom.js"
import { brandTitle, dataTable, emptyState, engineLabel, errorState, field, navigate, offsetOf, pageHead, pager, plural, section, select, SENTIMENTS, sentimentLabel } from "../kit.js"

/**
 * The brand's recent mentions in AI answers (the last 30 days, newest first).
 * State: ?sentiment=pos|neu|neg&region=US&language=en&engine=<slug>&offset=50; region and language default
 * to the brand's primary ones, the engine narrows the list on the page.
 */

type MentionsResponse = typeof MentionsResponseSchema.Encoded
type Mention = MentionsResponse["mentions"][number]

const PAGE = 50
const REGIONS = ["US", "GB", "CA", "AU", "IE", "IN", "DE", "FR", "ES", "IT", "NL", "BR", "MX", "JP"]
const LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pt", "ja"]

/** A link only for http(s) URLs: anything else an answer cites is shown as text. */
export const safeLink = (url: string) =>
  /^https?:\/\//i.test(url) ? h("a", { href: url, rel: "noopener noreferrer nofollow", target: "_blank", class: "truncate", title: url }, url) : h("span", null, url)

export const mentionsScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/mentions`
  const sentiment = params.get("sentiment") ?? ""
  const region = (params.get("region") ?? "").toUpperCase()
  const language = (params.get("language") ?? "").toLowerCase()
  const engine = params.get("engine") ?? ""
  const offset = offsetOf(params)
  const list = section("Mentions", "mention-list")

  const sentimentSelect = select([["", "All"], ...SENTIMENTS], sentiment)
  const regionSelect = select([["", "Primary region"], ...REGIONS.map((r) => [r, r] as const)], region)
  const languageSelect = select([["", "Region's language"], ...LANGUAGES.map((l) => [l, l] as const)], language)
  const engineSelect = select([["", "All engines"]], engine)
  // A value from a shared URL that the lists do not hold is still offered (and selected).
  for (const [control, value] of [[regionSelect, region], [languageSelect, language]] as const) {
    if (value !== "" && !Array.from(control.options).some((o) => o.value === value)) control.append(h("option", { value, selected: true }, value))
  }
  const apply = () =>
    navigate(path, params, { sentiment: sentimentSelect.value, region: regionSelect.value, language: languageSelect.value, engine: engineSelect.value, offset: null })
  for (const control of [sentimentSelect, regionSelect, languageSelect, engineSelect]) control.addEventListener("change", apply)

  const query = new URLSearchParams()
  if (sentiment !== "") query.set("sentiment", sentiment)
  if (region !== "") query.set("region", region)
  if (language !== "") query.set("language", language)
  void get<MentionsResponse>(`/api/v1/me/brands/${slug}/mentions?${query.toString()}`).then((result) => {
    if (!result.ok) return list.fill(errorState("The mentions", result.error))
    const { mentions } = result.value
    const engines = [...new Set(mentions.map((m) => m.engine))].sort()
    if (engine !== "" && !engines.includes(engine)) engines.push(engine)
    engineSelect.replaceChildren(h("option", { value: "" }, "All engines"), ...engines.map((e) => h("option", { value: e, selected: e === engine }, engineLabel(e))))
    const shown = engine === "" ? mentions : mentions.filter((m) => m.engine === engine)
    const filtered = sentiment !== "" || engine !== ""
    list.fill(
      h("p", { class: "muted", id: "mention-scope" },
        `${plural(shown.length, "mention")} ${mentions.length >= 500 ? "(the 500 newest) " : ""}in the last 30 days · region ${result.value.region}, language ${result.value.language}.`),
      shown.length === 0
        ? emptyState(
          filtered
            ? "No mention matches these filters."
            : "No AI answer in this region and language named your brand in the last 30 days.",
          filtered
            ? h("a", { href: `#${path}` }, "Show every mention")
            : h("span", null, "Add more prompts your customers ask on the ", h("a", { href: `#/brands/${slug}/prompts` }, "Prompts"), " screen, or try another region.")
        )
        : dataTable(
          ["Seen", "Engine", "Prompt", "What the answer said", "Rank", "Sentiment", "Cited page"],
          shown.slice(offset, offset + PAGE).map((m) => [
            formatDate(m.seen_at).slice(0, 10),
            engineLabel(m.engine),
            m.prompt,
            m.response_snippet,
            `#${m.rank}`,
            sentimentLabel(m.sentiment),
            m.cited_url === null ? "—" : safeLink(m.cited_url)
          ]),
          [4],
          { id: "mentions-table", "aria-label": "Mentions" }
        ),
      pager(path, params, offset, shown.length, PAGE)
    )
  })

  return h(
    "div",
    { id: "mentions-screen" },
    brandNav(slug, "mentions"),
    pageHead(brandTitle(slug, h("h1"), (n) => `Mentions · ${n}`), "What AI answers said about your brand, newest first."),
    h(
      "div",
      { class: "form-row card", role: "group", "aria-label": "Filters" },
      field("mentions-sentiment", "Sentiment", sentimentSelect),
      field("mentions-region", "Region", regionSelect),
      field("mentions-language", "Language", languageSelect),
      field("mentions-engine", "Engine", engineSelect)
    ),
    list.element
  )
}
