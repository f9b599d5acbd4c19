import type { TopicsResponse as TopicsResponseSchema } from "../../../visibility/Api.js"
import { get } from "../api.js"
import { brandNav } from "./nav.js"
import { formatNumber, h } from "../dom.js"
import { dataTable, emptyState, errorState, pageHead, section } from "../kit.js"

/** The topics of the account's monitored prompts, each a way into the ranking of that topic. */

type TopicsResponse = typeof TopicsResponseSchema.Encoded

const TIERS = { 1: "Most prompts", 2: "Some prompts", 3: "Few prompts" } as const

export const topicsScreen = (slug: string) => {
  const list = section("Topics", "topic-list")
  void get<TopicsResponse>("/api/v1/me/topics").then((result) => {
    if (!result.ok) return list.fill(errorState("The topics", result.error))
    const { themes, total_keywords } = result.value
    list.fill(
      themes.length === 0
        ? emptyState(
          "No topics yet: a topic groups monitored prompts about one subject, and the ranking can be read per topic.",
          h("a", { href: `#/brands/${slug}/prompts` }, "Give your prompts a topic")
        )
        : h(
          "div",
          null,
          h("p", { class: "muted" }, `${themes.length} topics over the prompts of all your brands, ${formatNumber(total_keywords)} distinct keywords.`),
          dataTable(
            ["Topic", "Prompts", "Weight", ""],
            themes.map((t) => [
              t.theme,
              formatNumber(t.count),
              TIERS[t.tier],
              h("span", { class: "actions" },
                h("a", { href: `#/brands/${slug}/ranking?topic=${encodeURIComponent(t.theme)}` }, "Ranking"),
                h("a", { href: `#/brands/${slug}/citations?topic=${encodeURIComponent(t.theme)}` }, "Gap report"),
                h("a", { href: `#/brands/${slug}/prompts?topic=${encodeURIComponent(t.theme)}` }, "Prompts"))
            ]),
            [1],
            { id: "topics-table", "aria-label": "Topics" }
          )
        )
    )
  })
  return h(
    "div",
    { id: "topics-screen" },
    brandNav(slug, "topics"),
    pageHead(h("h1", null, "Topics"), "The subjects your monitored prompts cover, across all your brands."),
    list.element
  )
}
