import { type ApiError, type Brand, describeError, get } from "./api.js"
import { append, clear, h } from "./dom.js"

/**
 * The one kit of building blocks every page and screen shares: human labels, states written for
 * people (loading, empty with a next step, errors as sentences), tables that become cards on a
 * phone, labelled form fields, the brand's display name for titles and the state kept in the hash
 * query (#/brands/<slug>/<screen>?name=value), so every view can be shared and reloaded. The
 * classes are style.css's shared section.
 */

type Content = Node | string | null | undefined | false

// ---------------------------------------------------------------------------
// Labels
// ---------------------------------------------------------------------------

// The label tables every page shares live in labels.ts; the screens take them from here too.
export { ENGINE_LABELS, engineLabel, humanize, RANGES, rangeLabel, sentimentLabel, VERTICAL_LABELS, verticalLabel } from "./labels.js"
import { humanize, RANGES, rangeLabel } from "./labels.js"

export const SENTIMENTS = [["pos", "Positive"], ["neu", "Neutral"], ["neg", "Negative"]] as const

export const INTENTS = ["informational", "commercial", "transactional", "navigational", "comparison"] as const

export const BUCKET_LABELS: Readonly<Record<string, string>> = {
  owned: "Your site",
  competitor: "Competitor",
  ugc: "Forums and social",
  reference: "Reference",
  earned: "Earned media"
}
export const bucketLabel = (bucket: string) => BUCKET_LABELS[bucket] ?? humanize(bucket)

// ---------------------------------------------------------------------------
// States
// ---------------------------------------------------------------------------

export const errorBox = (message: string) => h("div", { class: "error", role: "alert" }, message)

/**
 * A failed load: "<what> could not be loaded. <why>" (the why by `describeError`, the one wording of
 * errors), a brand that is not the account's with a way back, or a calm notice where the server
 * does not offer the view.
 */
export const errorState = (what: string, error: ApiError) =>
  error.status === 501
    ? h("div", { class: "notice", role: "status", "data-status": error.status }, `${what} is not available on this server yet.`)
    : error.status === 404 && error.body.error === "brand not found"
    ? h("div", { class: "error", role: "alert", "data-status": error.status }, `${what}: this brand is not in your account. `, h("a", { href: "#/brands" }, "See your brands"), ".")
    : h("div", { class: "error", role: "alert", "data-status": error.status }, `${what} could not be loaded. ${describeError(error)}`)

export const loadingState = (text = "Loading…") => h("p", { class: "loading", role: "status" }, text)

/** What is missing, then the next step (links or buttons; falsy ones are left out). */
export const emptyState = (text: string, ...next: ReadonlyArray<Content>) =>
  h("div", { class: "empty" }, h("p", null, text), next.some((n) => n) ? h("p", { class: "actions" }, ...next) : null)

/**
 * A table that scrolls sideways inside its card on a wide screen and becomes one card per row on a
 * phone (style.css, below 600 px): every cell carries its column's name in data-label, shown before
 * the value. The region takes focus so a keyboard can scroll it.
 */
export const tableWrap = (table: HTMLTableElement, label?: string) => {
  const headers = Array.from(table.querySelectorAll("thead th"), (th) => th.textContent ?? "")
  if (headers.length > 0) {
    table.classList.add("cards")
    for (const row of Array.from(table.querySelectorAll("tbody tr"))) {
      Array.from(row.children).forEach((cell, i) => {
        const name = headers[i]
        if (name && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", name)
      })
    }
  }
  return h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": label ?? table.getAttribute("aria-label") ?? "Table" }, table)
}

/** A table of header names and rows; columns listed in `numeric` are right-aligned. */
export const dataTable = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<Node | string>>,
  numeric: ReadonlyArray<number> = [],
  attrs: Record<string, string> = {}
) =>
  tableWrap(h(
    "table",
    attrs,
    h("thead", null, h("tr", null, headers.map((name, i) => h("th", { class: numeric.includes(i) ? "num" : null, scope: "col" }, name)))),
    h("tbody", null, rows.map((row) => h("tr", null, row.map((cell, i) => h("td", { class: numeric.includes(i) ? "num" : null }, cell)))))
  ))

/** One label + control (+ hint) column of a form; the label names the control for screen readers. */
export const field = (id: string, label: string, control: HTMLElement, hint?: string) => {
  control.id = id
  if (hint !== undefined) control.setAttribute("aria-describedby", `${id}-hint`)
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    control,
    hint === undefined ? null : h("span", { class: "hint", id: `${id}-hint` }, hint)
  )
}

export const select = (options: ReadonlyArray<readonly [string, string]>, value: string) =>
  h("select", null, options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)))

/** A card with a heading whose body shows "Loading…" until `fill` replaces it. */
export const section = (title: string, id: string, intro?: string) => {
  const body = h("div", { "aria-live": "polite" }, loadingState())
  const element = h("section", { class: "card", id, "aria-labelledby": `${id}-title` }, h("h2", { id: `${id}-title` }, title), intro ? h("p", { class: "muted" }, intro) : null, body)
  const fill = (...children: ReadonlyArray<Node | string | null>) => {
    clear(body)
    append(body, children)
  }
  return { element, body, fill }
}

// ---------------------------------------------------------------------------
// State in the URL
// ---------------------------------------------------------------------------

/** The hash of a screen with its state: empty values are left out, so defaults keep URLs short. */
export const screenHash = (path: string, state: Record<string, string | null | undefined>) => {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(state)) if (value) query.set(name, value)
  const search = query.toString()
  return `#${path}${search === "" ? "" : `?${search}`}`
}

/** Moves to the same screen with some state changed (a new history entry: the back button undoes it). */
export const navigate = (path: string, params: URLSearchParams, changes: Record<string, string | null>) => {
  const state: Record<string, string | null> = Object.fromEntries(params.entries())
  location.hash = screenHash(path, { ...state, ...changes })
}

export const rangeOf = (params: URLSearchParams) => {
  const range = params.get("range") ?? "30d"
  return (RANGES as ReadonlyArray<string>).includes(range) ? range : "30d"
}

export const rangeField = (id: string, range: string, onChange: (range: string) => void) => {
  const control = select(RANGES.map((r) => [r, rangeLabel(r)] as const), range)
  control.addEventListener("change", () => onChange(control.value))
  return field(id, "Period", control)
}

// ---------------------------------------------------------------------------
// Brands
// ---------------------------------------------------------------------------

let brandsCache: Promise<ReadonlyArray<Brand>> | null = null

/** The account's brands, read once per screen (the calls of one screen share the answer; `forgetBrands` after a change). */
export const brands = (): Promise<ReadonlyArray<Brand>> => {
  brandsCache ??= get<{ brands: ReadonlyArray<Brand> }>("/api/v1/me/brands").then((result) => {
    if (!result.ok) {
      brandsCache = null
      return []
    }
    return result.value.brands
  })
  return brandsCache
}
export const forgetBrands = () => (brandsCache = null)
// Read again on every navigation: a brand added on another page is known to the next screen.
window.addEventListener("hashchange", forgetBrands)

/** The brand's display name for titles; the slug while it loads or when it is unknown. */
export const brandTitle = (slug: string, heading: HTMLElement, title: (name: string) => string) => {
  heading.textContent = title(slug)
  void brands().then((list) => {
    const brand = list.find((b) => b.brand_slug === slug)
    if (brand) {
      heading.textContent = title(brand.brand_name)
      document.title = `${title(brand.brand_name)} · AI Visibility`
    }
  })
  return heading
}

/** A page's heading (an element, so `brandTitle` can name it later), its subtitle and its actions. */
export const pageHead = (heading: HTMLElement | string, subtitle?: string | null, ...actions: ReadonlyArray<Content>) =>
  h(
    "div",
    { class: "page-head" },
    h("div", null, typeof heading === "string" ? h("h1", null, heading) : heading, subtitle ? h("p", { class: "muted" }, subtitle) : null),
    actions.some((a) => a) ? h("div", { class: "actions" }, ...actions) : null
  )

// ---------------------------------------------------------------------------
// Paging of long lists (state: ?offset=n)
// ---------------------------------------------------------------------------

export const offsetOf = (params: URLSearchParams) => Math.max(0, Math.floor(Number(params.get("offset") ?? "0")) || 0)

export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

/** Previous/next of a list shown `size` at a time; nothing when it fits on one page. */
export const pager = (path: string, params: URLSearchParams, offset: number, total: number, size: number) =>
  total <= size
    ? null
    : h(
      "div",
      { class: "pager" },
      h("button", { type: "button", class: "secondary", disabled: offset === 0, onclick: () => navigate(path, params, { offset: offset - size <= 0 ? null : String(offset - size) }) }, "Previous"),
      h("span", { class: "muted" }, `${offset + 1}–${Math.min(offset + size, total)} of ${total}`),
      h("button", { type: "button", class: "secondary", disabled: offset + size >= total, onclick: () => navigate(path, params, { offset: String(offset + size) }) }, "Next")
    )
