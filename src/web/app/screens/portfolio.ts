import type { PortfolioResponse as PortfolioResponseSchema } from "../../../visibility/Api.js"
import { get } from "../api.js"
import { formatNumber, h } from "../dom.js"
import { dataTable, emptyState, engineLabel, errorState, navigate, pageHead, rangeField, rangeOf, section } from "../kit.js"
import { INTERVAL_MEANING, intervalEnds } from "../intervals.js"

/** Every brand of the account side by side: AI presence score, its change, top engine and competitor. State: ?range=30d. */

type PortfolioResponse = typeof PortfolioResponseSchema.Encoded

export const portfolioScreen = (params: URLSearchParams) => {
  const range = rangeOf(params)
  const list = section("Brands", "portfolio")
  void get<PortfolioResponse>(`/api/v1/me/portfolio?range=${range}`).then((result) => {
    if (!result.ok) return list.fill(errorState("The portfolio", result.error))
    const rows = result.value.brands
    list.fill(
      rows.length === 0
        ? emptyState("No brand yet: the portfolio compares all the brands of your account.", h("a", { href: "#/brands" }, "Add a brand"))
        : dataTable(
          ["Brand", "AI presence score", "Change (7 days)", "Answers", "Top engine", "Top competitor"],
          rows.map((b) => [
            h("a", { href: `#/brands/${b.slug}/visibility${range === "30d" ? "" : `?range=${range}`}` }, b.name),
            b.n === 0 ? "—" : b.ai_presence_score.toFixed(1) + intervalEnds(b.ai_presence_score_ci95, 1),
            b.n === 0 ? "—" : `${b.delta_7d >= 0 ? "+" : "−"}${Math.abs(b.delta_7d).toFixed(1)}`,
            formatNumber(b.n),
            b.top_engine === "" ? "—" : engineLabel(b.top_engine),
            b.top_competitor === "" ? "—" : b.top_competitor
          ]),
          [1, 2, 3],
          { id: "portfolio-table", "aria-label": "Brands of the portfolio" }
        ),
      h("p", { class: "muted" }, `The AI presence score is the share of answers naming the brand, out of 100. ${INTERVAL_MEANING}`)
    )
  })
  return h(
    "div",
    { id: "portfolio-screen" },
    h("nav", { class: "tabs", "aria-label": "Portfolio" }, h("a", { href: "#/brands" }, "← Brands")),
    pageHead(h("h1", null, "Portfolio"), "All your brands in AI answers, side by side."),
    h("div", { class: "form-row card" }, rangeField("portfolio-range", range, (r) => navigate("/portfolio", params, { range: r === "30d" ? null : r }))),
    list.element
  )
}
