import { type ApiError, type Brand, describeError, get } from "./api.js"
import { h } from "./dom.js"

/**
 * Building blocks every screen shares: states written for people (loading, empty with a next step,
 * errors as sentences), tables that scroll inside their card on a phone, labelled form fields, and
 * the brand's display name for titles. The classes are style.css's shared section.
 */

type Content = Node | string | null | undefined | false

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

/** What is missing, then the next step (a link or a button). */
export const emptyState = (text: string, ...next: ReadonlyArray<Content>) =>
  h("div", { class: "empty" }, h("p", null, text), next.some((n) => n) ? h("p", { class: "actions" }, ...next) : null)

export const loadingState = (text = "Loading…") => h("p", { class: "loading", role: "status" }, text)

/** A table that scrolls sideways inside its card instead of widening the page. */
export const tableWrap = (table: HTMLTableElement, label?: string) =>
  h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": label ?? table.getAttribute("aria-label") ?? "table" }, table)

export const field = (id: string, label: string, control: HTMLElement, hint?: string) => {
  control.id = id
  if (hint) control.setAttribute("aria-describedby", `${id}-hint`)
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hint ? h("span", { class: "hint", id: `${id}-hint` }, hint) : null)
}

export const pageHead = (title: string, subtitle?: string | null, ...actions: ReadonlyArray<Content>) =>
  h(
    "div",
    { class: "page-head" },
    h("div", null, h("h1", null, title), subtitle ? h("p", { class: "muted" }, subtitle) : null),
    actions.some((a) => a) ? h("div", { class: "actions" }, ...actions) : null
  )

let brands: Promise<ReadonlyArray<Brand>> | null = null

/** The account's brands, asked once per page load (forgotten with `forgetBrands` after a change). */
export const accountBrands = () => {
  brands ??= get<{ brands: ReadonlyArray<Brand> }>("/api/v1/me/brands").then((r) => (r.ok ? r.value.brands : []))
  return brands
}
export const forgetBrands = () => {
  brands = null
}

/** The brand's display name for a title ("Northwind CRM"), its slug while unknown. */
export const brandName = async (slug: string) => (await accountBrands()).find((b) => b.brand_slug === slug)?.brand_name ?? slug

/** Sets an element's text to the brand's name once known (titles are drawn before the answer). */
export const nameInto = (element: HTMLElement, slug: string, format: (name: string) => string) => {
  element.textContent = format(slug)
  void brandName(slug).then((name) => {
    element.textContent = format(name)
    document.title = `${format(name)} · AI Visibility`
  })
  return element
}
