import { h } from "../dom.js"

/**
 * The pages of one brand, in the order of its navigation: [path segment, label].
 * What to fix first leads; then the site's AI traffic (crawlers, AI search, referrals), the answers
 * (visibility and the screens of this folder), and the brand's settings last.
 */
export const BRAND_SCREENS: ReadonlyArray<readonly [string, string]> = [
  ["actions", "Actions"],
  ["agents", "Agent dashboard"],
  ["search-performance", "AI search"],
  ["attribution", "AI referrals"],
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

/**
 * The brand's navigation, the current page marked for screen readers too. On a phone it is one
 * row that scrolls sideways (a shadow at an edge says more tabs are there), with the current tab
 * scrolled into view, rather than five wrapped rows above every page.
 */
export const brandNav = (slug: string, active: string) => {
  const nav = h(
    "nav",
    { class: "tabs", "aria-label": "Brand pages" },
    h("a", { href: "#/brands" }, "← Brands"),
    BRAND_SCREENS.map(([screen, label]) =>
      h("a", { href: `#/brands/${slug}/${screen}`, class: active === screen ? "active" : null, "aria-current": active === screen ? "page" : null }, label)
    )
  )
  // Once the page is in the document (it may wait for a read first), only the strip scrolls, never the page:
  // the current tab's left edge, less a peek at the tab before it.
  let frames = 0
  const reveal = () => {
    if (!nav.isConnected) return void (frames++ < 600 && requestAnimationFrame(reveal))
    const current = nav.querySelector<HTMLElement>("a.active")
    if (current && nav.scrollWidth > nav.clientWidth) nav.scrollLeft = Math.max(0, current.offsetLeft - nav.offsetLeft - 48)
  }
  requestAnimationFrame(reveal)
  return nav
}
