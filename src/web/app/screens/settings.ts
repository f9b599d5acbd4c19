import { type Brand } from "../api.js"
import { brandNav } from "./nav.js"
import { copyButton, formatDate, h } from "../dom.js"
import { brands, brandTitle, emptyState, pageHead, section, verticalLabel } from "./kit.js"

/** A brand's settings: what identifies it, and what to copy into a tag or a log source. */

interface BrandWithScan extends Brand {
  readonly scan_frequency_hours?: number
  readonly next_scan_at?: string
}

const item = (label: string, ...value: ReadonlyArray<Node | string>) => [h("dt", null, label), h("dd", null, ...value)]

export const settingsScreen = (slug: string) => {
  const card = section("Brand", "brand-settings")
  void brands().then((list) => {
    const brand: BrandWithScan | undefined = list.find((b) => b.brand_slug === slug)
    if (!brand) return card.fill(emptyState("This brand is not in your account.", h("a", { href: "#/brands" }, "Pick a brand")))
    card.fill(
      h(
        "dl",
        { class: "settings" },
        item("Name", brand.brand_name),
        item("Website", brand.domain),
        item("Industry", verticalLabel(brand.vertical)),
        item("Slug", h("code", { id: "brand-slug-value" }, brand.brand_slug), " ", copyButton(() => brand.brand_slug, "Copy slug")),
        item("Site id", h("code", { id: "site-id-value" }, brand.site_id), " ", copyButton(() => brand.site_id, "Copy site id")),
        brand.scan_frequency_hours === undefined ? [] : item("Scans", `every ${brand.scan_frequency_hours} hours (set by your plan)`),
        brand.next_scan_at === undefined ? [] : item("Next scan", formatDate(brand.next_scan_at)),
        item("Added", formatDate(brand.added_at))
      ),
      h("p", { class: "muted" }, "The slug names the brand in API calls; the site id goes into the JavaScript tag and the log-drain URL (see the Brands page for each log source).")
    )
  })
  return h(
    "div",
    { id: "settings-screen" },
    brandNav(slug, "settings"),
    pageHead(brandTitle(slug, h("h1"), (n) => `Settings · ${n}`)),
    card.element
  )
}
