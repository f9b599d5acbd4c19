import type { ActionsResponse as ActionsResponseSchema } from "../../../actions/Api.js"
import { get } from "../api.js"
import { brandNav } from "./nav.js"
import { formatNumber, h } from "../dom.js"
import { brandTitle, emptyState, errorState, navigate, pageHead, rangeField, rangeLabel, rangeOf, section } from "../kit.js"

/**
 * What to fix first (docs/actions.md): the brand's actions from its crawler logs and its AI answers, each
 * a sentence with its numbers and a link to the screen that shows them. The first page of every brand.
 * State: ?range=7d|30d|90d.
 */

type ActionsResponse = typeof ActionsResponseSchema.Encoded
type Action = ActionsResponse["actions"][number]

const KIND_LABELS: Readonly<Record<string, string>> = {
  fix_crawler_errors: "Crawler errors",
  serve_llms_txt: "llms.txt",
  block_spoofed: "Spoofed crawler",
  earn_citations_from: "Citation gap",
  win_prompt: "Prompt lost to a competitor"
}
const EVIDENCE_LABELS: Readonly<Record<string, string>> = {
  fix_crawler_errors: "See the failing hits",
  serve_llms_txt: "See the requests",
  block_spoofed: "See the spoofed hits",
  earn_citations_from: "See the citation gap",
  win_prompt: "See the competitor's prompts"
}

/** Only the application's own routes are links (the API builds them; anything else is not followed). */
const evidenceLink = (action: Action, index: number) =>
  action.link.startsWith("#/")
    ? h("a", { href: action.link, "aria-describedby": `action-${index}-title` }, EVIDENCE_LABELS[action.kind] ?? "See the evidence")
    : null

export const actionsScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/actions`
  const range = rangeOf(params)
  const list = section("What to fix first", "action-list")

  void get<ActionsResponse>(`/api/v1/me/brands/${slug}/actions?range=${range}`).then((result) => {
    if (!result.ok) return list.fill(errorState("The actions", result.error))
    const { actions, looked_at: seen } = result.value
    const scope = `${rangeLabel(range).toLowerCase()}: ${formatNumber(seen.crawler_hits)} AI crawler hits from ` +
      `${formatNumber(seen.bots)} bots, ${formatNumber(seen.answers)} AI answers to ${formatNumber(seen.prompts)} prompts ` +
      `and ${formatNumber(seen.gap_domains)} domains cited only beside competitors`
    list.fill(
      actions.length === 0
        ? emptyState(
          `Nothing to fix: no rule matched in the ${scope}.`,
          h("span", null, "Pages that crawlers fail to fetch, requests for a missing /llms.txt, spoofed crawlers, sources cited only for " +
            "competitors and prompts a competitor wins show here once the data shows them. ",
            h("a", { href: `#/start?brand=${slug}` }, "Connect more data"))
        )
        : h(
          "div",
          null,
          h("p", { class: "muted", id: "action-scope" }, `${actions.length === 1 ? "One action" : `${actions.length} actions`}, most pressing first, from the ${scope}.`),
          h(
            "ol",
            { class: "action-list", id: "actions" },
            actions.map((action, i) =>
              h(
                "li",
                { class: "action", "data-kind": action.kind },
                h("span", { class: "badge" }, KIND_LABELS[action.kind] ?? action.kind),
                h("h3", { id: `action-${i}-title` }, action.title),
                h("p", null, action.why),
                h("p", null, evidenceLink(action, i))
              )
            )
          )
        )
    )
  })

  return h(
    "div",
    { id: "actions-screen" },
    brandNav(slug, "actions"),
    pageHead(
      brandTitle(slug, h("h1"), (n) => `Actions · ${n}`),
      "What to do next, from your AI crawler logs and the AI answers together; every number links to the screen that shows it."
    ),
    h("div", { class: "form-row card", role: "group", "aria-label": "Period" }, rangeField("actions-range", range, (r) => navigate(path, params, { range: r }))),
    list.element
  )
}
