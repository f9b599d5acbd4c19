import { type CatalogAgent, type CatalogResponse, get } from "../api.js"
import { h } from "../dom.js"
import { KIND_DESCRIPTIONS, KIND_LABELS, kindLabel, METHOD_DESCRIPTIONS, METHOD_LABELS, methodLabel } from "../labels.js"
import { emptyState, errorState, field, navigate, offsetOf, pageHead, pager, plural, screenHash, section, select, tableWrap } from "../kit.js"

/**
 * The agent catalog: every AI crawler and agent the server recognises, its operator and kind, and how
 * the operator lets a visit be verified (docs/verification.md). The same for every account.
 * State: #/catalog?q=<text>&kind=<kind>&method=<ip_ranges|reverse_dns|web_bot_auth|none>&bot=<exact name>&offset=<n>.
 */

const PATH = "/catalog"
/** Agents per page: the list stays short on a phone; search and filters find the rest. */
const PAGE_SIZE = 50
const METHODS = ["ip_ranges", "reverse_dns", "web_bot_auth", "none"] as const

const formatDay = (value: string) => {
  const date = new Date(`${value}T00:00:00Z`)
  return Number.isNaN(date.getTime()) ? value : date.toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" })
}

const matches = (agent: CatalogAgent, params: URLSearchParams) => {
  const bot = params.get("bot")
  if (bot && agent.bot !== bot) return false
  const kind = params.get("kind")
  if (kind && agent.kind !== kind) return false
  const method = params.get("method")
  if (method === "none" ? agent.verification_methods.length > 0 : method && !agent.verification_methods.some((m) => m === method)) return false
  const q = (params.get("q") ?? "").trim().toLowerCase()
  return q === "" || [agent.bot, agent.vendor, kindLabel(agent.kind)].some((text) => text.toLowerCase().includes(q))
}

const badges = (agent: CatalogAgent) =>
  h(
    "span",
    { class: "chips" },
    agent.verification_methods.length === 0
      ? h("span", { class: "badge method none", title: METHOD_DESCRIPTIONS["none"] ?? null }, methodLabel("none"))
      : agent.verification_methods.map((m) => h("span", { class: `badge method ${m}`, title: METHOD_DESCRIPTIONS[m] ?? null }, methodLabel(m)))
  )

/** The operator's page: a link only for a web address (the text is its host, the table stays narrow). */
const docsLink = (url: string | null) => {
  if (url === null || !/^https?:\/\//i.test(url)) return h("span", { class: "muted" }, "—")
  let host = url
  try {
    host = new URL(url).host.replace(/^www\./, "")
  } catch {
    // Not a parsable URL: shown as the catalog has it.
  }
  return h("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, host)
}

export const catalogScreen = (params: URLSearchParams) => {
  const list = section("Agents", "catalog-agents")
  const about = h("p", { class: "muted", id: "catalog-about" })

  const q = h("input", { type: "search", name: "q", value: params.get("q") ?? "", placeholder: "e.g. GPTBot, OpenAI", size: 18 })
  const kind = select([["", "Any kind"], ...Object.entries(KIND_LABELS)], params.get("kind") ?? "")
  kind.name = "kind"
  const method = select([["", "Any method"], ...METHODS.map((m) => [m, methodLabel(m)] as const)], params.get("method") ?? "")
  method.name = "method"
  // Filters apply as soon as they change, like every screen's; the search field when it is left or Enter is pressed.
  const apply = () => navigate(PATH, params, { q: q.value.trim() || null, kind: kind.value || null, method: method.value || null, offset: null })
  for (const control of [q, kind, method]) control.addEventListener("change", apply)
  const filters = h(
    "form",
    {
      class: "form-row card",
      "aria-label": "Filters",
      onsubmit: (event: Event) => {
        event.preventDefault()
        apply()
      }
    },
    field("catalog-q", "Search", q),
    field("catalog-kind", "Kind", kind),
    field("catalog-method", "Verification", method)
  )

  // One agent asked for by name (the agent dashboard's link): a chip that shows them all again.
  const bot = params.get("bot")
  const chosen = bot
    ? h(
      "div",
      { class: "chips", id: "catalog-chosen" },
      h("span", { class: "chip active" }, `Agent: ${bot}`, h("button", {
        type: "button",
        class: "remove",
        "aria-label": "Show every agent",
        onclick: () => navigate(PATH, params, { bot: null, offset: null })
      }, "×"))
    )
    : null

  void get<CatalogResponse>("/api/v1/catalog").then((result) => {
    if (!result.ok) return list.fill(errorState("The agent catalog", result.error))
    const { agents, ranges_snapshot, version } = result.value
    about.textContent = `Catalog version ${version}; the operators' published IP ranges of ${formatDay(ranges_snapshot)}.`
    const shown = agents.filter((agent) => matches(agent, params))
    const filtered = ["q", "kind", "method", "bot"].some((name) => params.get(name))
    const offset = offsetOf(params) < shown.length ? offsetOf(params) : 0
    const page = shown.slice(offset, offset + PAGE_SIZE)
    list.fill(
      h("p", { class: "muted", id: "catalog-count", role: "status" }, filtered ? `Showing ${plural(shown.length, "agent")} of ${agents.length}.` : `${plural(agents.length, "agent")}.`),
      shown.length === 0
        ? emptyState("No agent of the catalog matches these filters.", h("a", { href: screenHash(PATH, {}) }, "Show every agent"))
        : tableWrap(h(
          "table",
          { id: "catalog-table", "aria-label": "Agents of the catalog" },
          h(
            "thead",
            null,
            h("tr", null, ["Agent", "Operator", "Kind", "Verification", "Documentation"].map((name) => h("th", { scope: "col" }, name)))
          ),
          h(
            "tbody",
            null,
            page.map((agent) =>
              h(
                "tr",
                { "data-bot": agent.bot },
                h("td", null, h("strong", null, agent.bot), agent.robots_only ? h("div", { class: "hint" }, "robots.txt token only") : null),
                h("td", null, agent.vendor),
                h("td", { title: KIND_DESCRIPTIONS[agent.kind] ?? null }, kindLabel(agent.kind)),
                h("td", null, badges(agent)),
                h("td", null, docsLink(agent.docs_url))
              )
            )
          )
        )),
      shown.length === 0 ? null : pager(PATH, params, offset, shown.length, PAGE_SIZE)
    )
  })

  return h(
    "div",
    { id: "catalog-screen" },
    h("nav", { class: "tabs", "aria-label": "Catalog" }, h("a", { href: "#/brands" }, "← Brands")),
    pageHead(h("h1", null, "AI agent catalog"), "Every AI crawler and agent recognised in your logs, and how its operator lets a visit be verified."),
    about,
    filters,
    chosen,
    list.element,
    h(
      "section",
      { class: "card", id: "catalog-methods", "aria-labelledby": "catalog-methods-title" },
      h("h2", { id: "catalog-methods-title" }, "What the methods mean"),
      h(
        "ul",
        { class: "list" },
        METHODS.map((m) => h("li", null, h("span", null, h("span", { class: `badge method ${m}` }, METHOD_LABELS[m] ?? m), " ", METHOD_DESCRIPTIONS[m] ?? "")))
      ),
      h("p", { class: "muted" }, "A visit checked by a method is Verified or Spoofed on the agent dashboard; without one it is Not verifiable.")
    )
  )
}
