import type { FanoutsResponse as FanoutsResponseSchema } from "../../../visibility/Api.js"
import { get } from "../api.js"
import { brandNav } from "./nav.js"
import { h } from "../dom.js"
import { emptyState, engineLabel, errorState, field, navigate, offsetOf, pageHead, pager, plural, rangeField, rangeOf, section, select } from "../kit.js"
import { safeLink } from "./mentions.js"

/**
 * Query fan-outs: how an engine split a monitored prompt into the sub-questions it searched,
 * and what it cited for each. State: ?range=30d&engine=<slug>&brands=all (default: this brand only)&offset=25.
 */

type FanoutsResponse = typeof FanoutsResponseSchema.Encoded
type FanoutGroup = FanoutsResponse["prompts"][number]

const PAGE = 25

export const fanoutsScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/fanouts`
  const range = rangeOf(params)
  const engine = params.get("engine") ?? ""
  const allBrands = params.get("brands") === "all"
  const offset = offsetOf(params)
  const list = section("Prompts and their sub-questions", "fanout-list")
  const engineSelect = select([["", "All engines"]], engine)
  engineSelect.addEventListener("change", () => navigate(path, params, { engine: engineSelect.value, offset: null }))
  const scope = select([["", "This brand"], ["all", "All brands"]], allBrands ? "all" : "")
  scope.addEventListener("change", () => navigate(path, params, { brands: scope.value, offset: null }))

  void get<FanoutsResponse>(`/api/v1/me/citations/fanouts?range=${range}`).then((result) => {
    if (!result.ok) return list.fill(errorState("The fan-outs", result.error))
    const ofScope = allBrands ? result.value.prompts : result.value.prompts.filter((g) => g.brand_slug === slug)
    const engines = [...new Set(ofScope.map((g) => g.engine))].sort()
    if (engine !== "" && !engines.includes(engine)) engines.push(engine)
    engineSelect.replaceChildren(h("option", { value: "" }, "All engines"), ...engines.map((e) => h("option", { value: e, selected: e === engine }, engineLabel(e))))
    const shown = engine === "" ? ofScope : ofScope.filter((g) => g.engine === engine)
    list.fill(
      result.value.truncated_groups
        ? h("p", { class: "notice" }, "Only the first prompts are shown: choose a shorter period to see the rest.")
        : null,
      shown.length === 0
        ? emptyState(
          ofScope.length === 0
            ? "No engine has broken a prompt of this brand into sub-questions in this period. Engines that search the web (such as Perplexity, ChatGPT search and Google AI Overviews) report them after a scan."
            : "No fan-out of this engine in this period.",
          ofScope.length === 0 ? h("a", { href: `#/brands/${slug}/prompts` }, "Review the monitored prompts") : h("a", { href: `#${path}` }, "Show every engine")
        )
        : h(
          "div",
          null,
          h("p", { class: "muted" }, `${shown.length} prompt answers broken into searches. Open one to see its sub-questions.`),
          h(
            "ul",
            { class: "list", id: "fanout-groups" },
            shown.slice(offset, offset + PAGE).map((group) =>
              h(
                "li",
                { class: "fanout" },
                h(
                  "details",
                  null,
                  h("summary", null, h("strong", null, group.prompt_text), ` · ${engineLabel(group.engine)} · ${group.snapshot_date}`, allBrands ? ` · ${group.brand_name}` : "",
                    ` · ${plural(group.fanouts.length, "search", "searches")}`),
                  h(
                    "ol",
                    null,
                    group.fanouts.map((f) =>
                      h("li", null, f.sub_question, f.citations.length === 0 ? null : h("ul", null, f.citations.map((url) => h("li", null, safeLink(url)))))
                    )
                  )
                )
              )
            )
          ),
          pager(path, params, offset, shown.length, PAGE)
        )
    )
  })

  return h(
    "div",
    { id: "fanouts-screen" },
    brandNav(slug, "fanouts"),
    pageHead(h("h1", null, "Query fan-outs"), "The searches an AI engine ran to answer a prompt, and the pages it cited for each."),
    h(
      "div",
      { class: "form-row card", role: "group", "aria-label": "Filters" },
      rangeField("fanouts-range", range, (r) => navigate(path, params, { range: r === "30d" ? null : r, offset: null })),
      field("fanouts-engine", "Engine", engineSelect),
      field("fanouts-brands", "Brands", scope)
    ),
    list.element
  )
}
