import { h } from "../dom.js"

/**
 * The pages of one brand, in the order of its navigation: [path segment, label].
 * What to fix first leads; then the two dashboards; the rest are the screens of this folder.
 */
export const BRAND_SCREENS: ReadonlyArray<readonly [string, string]> = [
  ["actions", "Actions"],
  ["agents", "Agent dashboard"],
  ["visibility", "Visibility"],
  ["mentions", "Mentions"],
  ["ranking", "Ranking"],
  ["competitors", "Competitors"],
  ["prompts", "Prompts"],
  ["topics", "Topics"],
  ["citations", "Citations"],
  ["fanouts", "Fan-outs"],
  ["settings", "Settings"]
]

/** The brand's navigation, the current page marked for screen readers too. */
export const brandNav = (slug: string, active: string) =>
  h(
    "nav",
    { class: "tabs", "aria-label": "Brand pages" },
    h("a", { href: "#/brands" }, "← Brands"),
    BRAND_SCREENS.map(([screen, label]) =>
      h("a", { href: `#/brands/${slug}/${screen}`, class: active === screen ? "active" : null, "aria-current": active === screen ? "page" : null }, label)
    )
  )
