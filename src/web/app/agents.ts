import { type AgentPagesResponse, type AgentsResponse, type ApiError, get, type PageBotsResponse } from "./api.js"
import { chart, PALETTE } from "./charts.js"
import { append, clear, copyButton, formatDate, formatNumber, formatPercent, h } from "./dom.js"
import { KIND_LABELS, kindLabel, methodLabel, RANGES, rangeLabel, statusLabel, verdictLabel } from "./labels.js"
import { brandTitle, emptyState, errorState, loadingState, tableWrap } from "./kit.js"
import { brandNav } from "./screens/nav.js"

const AGENT_KINDS = Object.keys(KIND_LABELS)

/**
 * The agent dashboard of one brand: KPIs, trend, breakdowns, the crawled-pages table.
 * State lives in the hash query (#/brands/<slug>/agents?range=30d&kind=...&sort=hits&offset=0),
 * so a view can be shared and the back button works. The bot, vendor and kind choices come from
 * what the brand has seen (the API matches them exactly), and a breakdown row filters by itself.
 * Filters apply as soon as they change (no Apply button), like the other screens.
 * `path=/pricing` opens one crawled page: the bots that fetched it, each with its verification
 * verdicts (browser hooks: each bot's row `tr[data-bot="<bot>"]`, its verdict cell
 * `td[data-verdict="verified=<n> spoofed=<n> unverified=<n>"]`, docs/web-and-mcp.md).
 */

const FILTERS = ["range", "bot", "vendor", "kind", "verification"] as const
const VERDICTS = ["verified", "spoofed", "unverified"]

/** Per bot, its verified and spoofed hits (the same filters with verification=verified / spoofed). */
type VerdictsByBot = { readonly verified: Map<string, number>; readonly spoofed: Map<string, number> }
const share = (part: number | undefined, whole: number) => (whole === 0 ? "–" : formatPercent((part ?? 0) / whole))
const PAGE_PARAMS = ["folder", "status", "q", "sort", "dir", "limit", "offset"] as const

/**
 * Focuses `element` once it is in the document: a page is drawn before main.ts attaches it, and that
 * may wait for a request of its own. Gives up after a few seconds (the reader has moved on).
 */
const focusWhenAttached = (element: HTMLElement, tries = 100) => {
  if (element.isConnected) element.focus()
  else if (tries > 0) setTimeout(() => focusWhenAttached(element, tries - 1), 30)
}

/** The id of the control whose change redrew the page: focus goes back to it once it is drawn again. */
let refocus: string | null = null
const restoreFocus = (control: HTMLElement) => {
  if (refocus !== null && control.id === refocus) {
    refocus = null
    focusWhenAttached(control)
  }
}

const setParams = (slug: string, params: URLSearchParams, changes: Record<string, string | null>) => {
  const next = new URLSearchParams(params)
  for (const [name, value] of Object.entries(changes)) {
    if (value === null || value === "") next.delete(name)
    else next.set(name, value)
  }
  location.hash = `#/brands/${slug}/agents?${next.toString()}`
}

const pick = (params: URLSearchParams, names: ReadonlyArray<string>) => {
  const out = new URLSearchParams()
  for (const name of names) {
    const value = params.get(name)
    if (value) out.set(name, value)
  }
  return out
}

/** A failed read in words (kept under its old name for the pages that import it). */
export const unavailable = (error: ApiError, what: string) => errorState(what, error)

/** The tabs of a brand's pages. */
export const BRAND_TABS: Array<{ readonly id: string; readonly label: string }> = [
  { id: "actions", label: "Actions" },
  { id: "agents", label: "Agent dashboard" },
  { id: "visibility", label: "Visibility" }
]

export const tabs = (slug: string, active: string) =>
  h(
    "nav",
    { class: "tabs", "aria-label": "Brand pages" },
    h("a", { href: "#/brands" }, "← Brands"),
    BRAND_TABS.map((tab) =>
      h("a", { href: `#/brands/${slug}/${tab.id}`, class: active === tab.id ? "active" : null, "aria-current": active === tab.id ? "page" : null }, tab.label)
    )
  )

const kpi = (label: string, value: string) => h("div", { class: "kpi" }, h("div", { class: "muted" }, label), h("div", { class: "value" }, value))

/**
 * `firstExtra`: something shown under the first cell's content of a row (a link of its own). `cards`:
 * on a phone each row becomes a card, every cell labelled with its column (style.css `table.cards`),
 * so no column is out of sight.
 */
const table = (caption: string, headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number | Node>>, numeric: ReadonlyArray<number> = [], onRow?: (index: number) => void, firstExtra?: (index: number) => Node, cards = false) =>
  tableWrap(h(
    "table",
    { "aria-label": caption, class: cards ? "cards" : null },
    h("thead", null, h("tr", null, headers.map((name, i) => h("th", { class: numeric.includes(i) ? "num" : null, scope: "col" }, name)))),
    h(
      "tbody",
      null,
      rows.length === 0
        ? h("tr", null, h("td", { colspan: headers.length, class: "muted" }, "No crawler visits in this range."))
        : rows.map((row, r) =>
          h(
            "tr",
            // A button or a link in the row does its own thing, not the row's filter.
            { class: onRow ? "clickable" : null, onclick: onRow ? (event: Event) => event.target instanceof Element && event.target.closest("button, a") === null && onRow(r) : null },
            row.map((cell, i) =>
              h(
                "td",
                { class: numeric.includes(i) ? "num" : null, "data-label": headers[i] ?? null },
                // The first cell's button makes the row's filter reachable by keyboard.
                i === 0 && onRow ? h("button", { type: "button", class: "link", onclick: () => onRow(r) }, typeof cell === "number" ? formatNumber(cell) : cell) : typeof cell === "number" ? formatNumber(cell) : cell,
                i === 0 && firstExtra ? firstExtra(r) : null
              )
            )
          )
        )
    )
  ), caption)

/** Day labels without the year ("May 3"): readable under a chart at phone width. */
const dayLabel = (date: string) => {
  const parsed = new Date(`${date}T00:00:00Z`)
  return Number.isNaN(parsed.getTime()) ? date : parsed.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" })
}
const legendSide = () => (window.innerWidth < 600 ? "bottom" : "right")

const drawDashboard = (slug: string, params: URLSearchParams, data: AgentsResponse, verdicts: VerdictsByBot) => {
  const kinds = AGENT_KINDS.filter((kind) => data.trend.some((point) => (point.by_kind[kind] ?? 0) > 0))
  const filterBy = (changes: Record<string, string | null>) => setParams(slug, params, { ...changes, offset: null })
  if (data.kpis.hits === 0 && data.breakdowns.by_bot.length === 0) {
    const filtered = ["bot", "vendor", "kind", "verification"].some((name) => params.get(name))
    return [
      h(
        "div",
        { class: "kpis", id: "agent-kpis" },
        kpi("Crawler hits", "0"),
        kpi("Pages fetched", "0"),
        kpi("Bots seen", "0"),
        kpi("Error rate", "–")
      ),
      filtered
        ? emptyState(`No crawler visits match these filters in the ${rangeLabel(data.range).toLowerCase()}.`, h("a", { href: `#/brands/${slug}/agents?range=${data.range}` }, "Clear the filters"))
        : emptyState(
          `No AI crawler or agent has been recorded for this brand in the ${rangeLabel(data.range).toLowerCase()}. Connect a log source or paste the tracking tag below; visits show here within a minute of arriving.`,
          h("a", { href: `#/start?brand=${slug}` }, "Connect a log source"),
          data.range !== "90d" ? h("a", { href: `#/brands/${slug}/agents?range=90d` }, "Look at the last 90 days") : null
        ),
      tagCard(data)
    ]
  }
  return [
    data.retention_limited
      ? h("p", { class: "notice", id: "coverage-note" }, `Figures start on ${formatDay(data.coverage_from)}, when this brand's data begins; earlier days of this range have nothing to show.`)
      : null,
    data.ranges_snapshot === undefined
      ? null
      : h("p", { class: "muted", id: "ranges-snapshot" }, `Verified and spoofed are checked against the operators' published IP ranges of ${formatDay(data.ranges_snapshot)}.`),
    h(
      "div",
      { class: "kpis", id: "agent-kpis" },
      kpi("Crawler hits", formatNumber(data.kpis.hits)),
      kpi("Pages fetched", formatNumber(data.kpis.pages)),
      kpi("Bots seen", formatNumber(data.kpis.bots)),
      kpi("Error rate", formatPercent(data.kpis.error_rate)),
      ...(data.breakdowns.by_verification ?? []).filter((v) => v.verification !== "unverified").map((v) =>
        kpi(verdictLabel(v.verification), share(v.hits, data.kpis.hits))
      )
    ),
    h(
      "section",
      { class: "card" },
      h("h2", null, "Crawler hits per day, by kind"),
      chart("Crawler hits per day by kind", {
        type: "bar",
        data: {
          labels: data.trend.map((point) => dayLabel(point.date)),
          datasets: (kinds.length > 0 ? kinds : ["hits"]).map((kind, i) => ({
            label: kinds.length > 0 ? kindLabel(kind) : "Hits",
            data: data.trend.map((point) => kinds.length > 0 ? point.by_kind[kind] ?? 0 : point.hits),
            backgroundColor: PALETTE[i % PALETTE.length]!
          }))
        },
        options: { scales: { x: { stacked: true, ticks: { maxRotation: 0, autoSkip: true } }, y: { stacked: true, beginAtZero: true } }, plugins: { legend: { position: "bottom" } } }
      })
    ),
    h(
      "div",
      { class: "grid2" },
      h(
        "section",
        { class: "card" },
        h("h2", null, "By vendor"),
        data.breakdowns.by_vendor.length === 0
          ? h("p", { class: "muted" }, "No crawler visits in this range.")
          : [
            chart("Hits by vendor", {
              type: "doughnut",
              data: {
                labels: data.breakdowns.by_vendor.map((row) => row.vendor),
                datasets: [{ data: data.breakdowns.by_vendor.map((row) => row.hits), backgroundColor: PALETTE }]
              },
              options: { plugins: { legend: { position: legendSide() } } }
            }, 200),
            table("Hits by vendor", ["Vendor", "Hits"], data.breakdowns.by_vendor.map((row) => [row.vendor, row.hits]), [1], (i) =>
              filterBy({ vendor: data.breakdowns.by_vendor[i]!.vendor }))
          ]
      ),
      h(
        "section",
        { class: "card" },
        h("h2", null, "By kind"),
        data.breakdowns.by_kind.length === 0
          ? h("p", { class: "muted" }, "No crawler visits in this range.")
          : [
            chart("Hits by kind", {
              type: "bar",
              data: {
                labels: data.breakdowns.by_kind.map((row) => kindLabel(row.kind)),
                datasets: [{ label: "Hits", data: data.breakdowns.by_kind.map((row) => row.hits), backgroundColor: PALETTE[0]! }]
              },
              options: { indexAxis: "y", plugins: { legend: { display: false } } }
            }, 200),
            table("Hits by kind", ["Kind", "Hits"], data.breakdowns.by_kind.map((row) => [kindLabel(row.kind), row.hits]), [1], (i) =>
              filterBy({ kind: data.breakdowns.by_kind[i]!.kind }))
          ]
      )
    ),
    h(
      "div",
      { class: "grid2" },
      h(
        "section",
        { class: "card" },
        h("h2", null, "By bot"),
        h("p", { class: "muted" }, "Choose a row to filter the whole page by it."),
        table(
          "Hits by bot",
          ["Bot", "Vendor", "Kind", "Hits", "Verified", "Spoofed"],
          data.breakdowns.by_bot.map((row) => [
            row.bot,
            row.vendor,
            kindLabel(row.kind),
            row.hits,
            share(verdicts.verified.get(row.bot), row.hits),
            share(verdicts.spoofed.get(row.bot), row.hits)
          ]),
          [3, 4, 5],
          (i) => filterBy({ bot: data.breakdowns.by_bot[i]!.bot }),
          // Its catalog entry: how the operator lets its visits be verified.
          (i) => {
            const bot = data.breakdowns.by_bot[i]!.bot
            return h("div", { class: "hint" }, h("a", { href: `#/catalog?bot=${encodeURIComponent(bot)}`, "aria-label": `Catalog entry of ${bot}: its verification methods` }, "Catalog entry"))
          },
          true
        )
      ),
      h(
        "section",
        { class: "card" },
        h("h2", null, "By status"),
        h("p", { class: "muted" }, "Choose a status to list the pages that answered with it."),
        table("Hits by status", ["Status", "Hits"], data.breakdowns.by_status.map((row) => [statusLabel(row.status), row.hits]), [1], (i) => {
          const status = data.breakdowns.by_status[i]!.status
          setParams(slug, params, { status: status === null ? null : String(status), offset: null })
          queueMicrotask(() => document.getElementById("agent-pages")?.scrollIntoView())
        })
      )
    ),
    tagCard(data)
  ]
}

const tagCard = (data: AgentsResponse) =>
  h(
    "section",
    { class: "card" },
    h("h2", null, "Tracking tag"),
    h("p", { class: "muted" }, "Paste into your site's HTML to also see AI agents that run JavaScript (every plan):"),
    h("pre", null, data.tag.snippet),
    copyButton(() => data.tag.snippet, "Copy", "Copy the tracking tag")
  )

const formatDay = (value: string) => {
  const date = new Date(value.length === 10 ? `${value}T00:00:00Z` : value)
  return Number.isNaN(date.getTime()) ? value : date.toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" })
}

const pagesSection = (slug: string, params: URLSearchParams) => {
  const section = h("section", { class: "card", id: "agent-pages", "aria-labelledby": "agent-pages-title" })
  const body = h("div", null, loadingState())
  const sort = params.get("sort") ?? "hits"
  const dir = params.get("dir") ?? (sort === "path" ? "asc" : "desc")
  const limit = Number(params.get("limit") ?? "50")
  const offset = Number(params.get("offset") ?? "0")

  const input = (name: string, placeholder: string) =>
    h("input", { id: `pages-${name}`, name, placeholder, value: params.get(name) ?? "", size: 14 })
  const folder = input("folder", "e.g. docs, or /")
  const status = input("status", "ok, error, 404")
  const q = input("q", "part of the path")
  const pageSize = h("select", { id: "pages-limit", name: "limit" }, [25, 50, 100, 500].map((n) => h("option", { value: n, selected: n === limit }, `${n} per page`)))
  // Each field applies once changed (a text field when it is left or Enter is pressed), like the other screens.
  const apply = (control: HTMLInputElement | HTMLSelectElement) => () => {
    const next: Record<string, string> = { folder: folder.value.trim(), status: status.value.trim(), q: q.value.trim(), limit: pageSize.value }
    const now: Record<string, string> = { folder: params.get("folder") ?? "", status: params.get("status") ?? "", q: params.get("q") ?? "", limit: String(limit) }
    // Nothing changed (a field left as it was): no new history entry.
    if (Object.keys(next).every((name) => next[name] === now[name])) return
    refocus = control.id
    setParams(slug, params, { ...next, offset: null })
  }
  for (const control of [folder, status, q, pageSize]) {
    control.addEventListener("change", apply(control))
    restoreFocus(control)
  }
  const filters = h(
    "form",
    {
      class: "row",
      "aria-label": "Crawled pages filters",
      onsubmit: (event: Event) => {
        event.preventDefault()
        const target = document.activeElement
        if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement) apply(target)()
      }
    },
    h("div", null, h("label", { for: "pages-folder" }, "Folder"), folder),
    h("div", null, h("label", { for: "pages-status" }, "Status"), status),
    h("div", null, h("label", { for: "pages-q" }, "Search"), q),
    h("div", null, h("label", { for: "pages-limit" }, "Page size"), pageSize)
  )

  const sortHeader = (column: string, label: string, numeric: boolean) => {
    const active = sort === column
    const nextDir = active ? (dir === "asc" ? "desc" : "asc") : (column === "path" ? "asc" : "desc")
    return h(
      "th",
      { class: numeric ? "num" : null, scope: "col", "aria-sort": active ? (dir === "asc" ? "ascending" : "descending") : null },
      h("button", { type: "button", class: "link", "data-sort": column, onclick: () => setParams(slug, params, { sort: column, dir: nextDir, offset: null }) }, label + (active ? (dir === "asc" ? " ▲" : " ▼") : ""))
    )
  }

  const query = pick(params, [...FILTERS, ...PAGE_PARAMS])
  query.set("limit", String(limit))
  query.set("offset", String(offset))
  query.set("sort", sort)
  query.set("dir", dir)
  void get<AgentPagesResponse>(`/api/v1/me/brands/${slug}/agents/pages?${query.toString()}`).then((result) => {
    clear(body)
    if (!result.ok) return append(body, [unavailable(result.error, "The crawled-pages list")])
    const data = result.value
    const last = Math.min(data.offset + data.pages.length, data.total)
    append(body, [
      tableWrap(h(
        "table",
        { id: "pages-table", class: "cards", "aria-label": "Crawled pages" },
        h("thead", null, h("tr", null, sortHeader("path", "Path", false), sortHeader("hits", "Hits", true), sortHeader("errors", "Errors", true), sortHeader("uniques", "Bots", true), h("th", { scope: "col" }, "Last seen"))),
        h(
          "tbody",
          null,
          data.pages.length === 0
            ? h("tr", null, h("td", { colspan: 5, class: "muted" }, "No crawled page matches these filters."))
            : data.pages.map((page) => {
              // The page's detail: which bots fetched it and whether they are who they claim to be.
              const detail = pageHash(slug, params, page.path)
              return h(
                "tr",
                {
                  class: "clickable",
                  "data-path": page.path,
                  onclick: (event: Event) => {
                    if (event.target instanceof Element && event.target.closest("a, button") === null) location.hash = detail
                  }
                },
                h("td", { "data-label": "Path" }, h("a", { href: detail, "aria-label": `${page.path}: the bots that fetched it and their verification` }, h("code", null, page.path))),
                h("td", { class: "num", "data-label": "Hits" }, formatNumber(page.hits)),
                h("td", { class: "num", "data-label": "Errors" }, formatNumber(page.errors)),
                h(
                  "td",
                  { class: "num", "data-label": "Bots", title: page.bots.join(", ") },
                  h("a", { href: detail, "aria-label": `${page.uniques} bots fetched ${page.path}: who they are and their verification` }, formatNumber(page.uniques))
                ),
                h("td", { "data-label": "Last seen" }, formatDate(page.last_seen))
              )
            })
        )
      ), "Crawled pages"),
      h(
        "div",
        { class: "pager" },
        h("button", { type: "button", class: "secondary", disabled: data.offset === 0, onclick: () => setParams(slug, params, { offset: String(Math.max(0, data.offset - data.limit)) }) }, "← Previous"),
        h("span", { class: "muted", id: "pages-range" }, data.total === 0 ? "0 pages" : `${data.offset + 1}–${last} of ${formatNumber(data.total)} pages`),
        h("button", { type: "button", class: "secondary", disabled: last >= data.total, onclick: () => setParams(slug, params, { offset: String(data.offset + data.limit) }) }, "Next →")
      )
    ])
  })
  append(section, [
    h("h2", { id: "agent-pages-title" }, "Crawled pages"),
    h("p", { class: "muted" }, "Choose a page to see which bots fetched it and whether they are who they claim to be."),
    filters,
    body
  ])
  return section
}

/** The hash of one crawled page's detail: the same filters, the list's own state left out. */
const pageHash = (slug: string, params: URLSearchParams, path: string) => {
  const next = pick(params, FILTERS)
  next.set("path", path)
  return `#/brands/${slug}/agents?${next.toString()}`
}

/** "verified 31 (62%) · spoofed 2 (4%)": the verdicts with hits, in the API's order. */
const verdictSplit = (counts: Readonly<Record<string, number>>, hits: number) =>
  VERDICTS.filter((v) => (counts[v] ?? 0) > 0)
    .map((v) => `${verdictLabel(v)} ${formatNumber(counts[v]!)} (${share(counts[v], hits)})`)
    .join(" · ")

/**
 * One crawled page (`path=` in the hash): every bot that fetched it with its hits by verdict. The bot
 * rows carry `data-bot`, their verdict cells `data-verdict="verified=<n> spoofed=<n> unverified=<n>"`.
 */
const pageBotsSection = (slug: string, params: URLSearchParams, path: string) => {
  const heading = h("h2", { id: "page-bots-title", tabindex: -1 }, "Bots that fetched ", h("code", null, path))
  const body = h("div", { "aria-live": "polite" }, loadingState())
  const back = pick(params, FILTERS)
  const section = h(
    "section",
    { class: "card", id: "page-bots", "aria-labelledby": "page-bots-title" },
    h("p", null, h("a", { href: `#/brands/${slug}/agents${back.size === 0 ? "" : `?${back.toString()}`}` }, "← All crawled pages")),
    heading,
    body
  )
  // Opened from the list (not redrawn by a filter, whose control keeps the focus): the reader lands on the heading.
  const focusHeading = refocus === null
  const query = pick(params, FILTERS)
  query.set("path", path)
  void get<PageBotsResponse>(`/api/v1/me/brands/${slug}/agents/pages/bots?${query.toString()}`).then((result) => {
    clear(body)
    if (!result.ok) return append(body, [unavailable(result.error, "The bots of this page")])
    const data = result.value
    if (focusHeading) focusWhenAttached(heading)
    const counts = Object.fromEntries(data.by_verification.map((v) => [v.verification, v.hits]))
    if (data.bots.length === 0) {
      return append(body, [emptyState(`No AI crawler fetched ${data.path} in the ${rangeLabel(data.range).toLowerCase()}${["bot", "vendor", "kind", "verification"].some((n) => params.get(n)) ? " under these filters" : ""}.`)])
    }
    append(body, [
      h(
        "p",
        { id: "page-bots-summary" },
        `${formatNumber(data.hits)} hits by ${formatNumber(data.bots.length)} ${data.bots.length === 1 ? "bot" : "bots"} in the ${rangeLabel(data.range).toLowerCase()}: ${verdictSplit(counts, data.hits)}.`
      ),
      h(
        "p",
        { class: "muted" },
        `Verified: the visit came from the operator's published addresses (or a valid signature). Spoofed: the operator publishes a way to check and the visit failed it, so someone else used the bot's name. Not verifiable: no client address was logged, or the operator publishes no way to check. Ranges of ${formatDay(data.ranges_snapshot)}.`
      ),
      tableWrap(h(
        "table",
        { id: "page-bots-table", class: "cards", "aria-label": `Bots that fetched ${data.path}` },
        h("thead", null, h("tr", null, ["Bot", "Hits", "Verification", "Errors", "Last seen"].map((name, i) => h("th", { scope: "col", class: i === 1 || i === 3 ? "num" : null }, name)))),
        h(
          "tbody",
          null,
          data.bots.map((bot) =>
            h(
              "tr",
              { "data-bot": bot.bot },
              h(
                "td",
                { "data-label": "Bot" },
                h("strong", null, bot.bot),
                h("div", { class: "hint" }, `${bot.vendor} · ${kindLabel(bot.kind)} · ${bot.methods.length === 0 ? "its operator publishes no way to check it" : `checked by ${bot.methods.map((m) => methodLabel(m)).join(", ")}`}`)
              ),
              h("td", { class: "num", "data-label": "Hits" }, formatNumber(bot.hits)),
              h(
                "td",
                { "data-label": "Verification", "data-verdict": `verified=${bot.verified} spoofed=${bot.spoofed} unverified=${bot.unverified}` },
                verdictSplit({ verified: bot.verified, spoofed: bot.spoofed, unverified: bot.unverified }, bot.hits)
              ),
              h("td", { class: "num", "data-label": "Errors" }, formatNumber(bot.errors)),
              h("td", { "data-label": "Last seen" }, formatDate(bot.last_seen))
            )
          )
        )
      ), `Bots that fetched ${data.path}`)
    ])
  })
  return section
}

/** A choice list: "any …" first, then the values seen, keeping the current one even if unseen now. */
const choices = (name: string, anyLabel: string, values: ReadonlyArray<readonly [string, string]>, current: string | null) => {
  const seen = current && !values.some(([v]) => v === current) ? [...values, [current, current] as const] : values
  return h(
    "select",
    { id: `filter-${name}`, name },
    h("option", { value: "" }, anyLabel),
    seen.map(([value, label]) => h("option", { value, selected: current === value }, label))
  )
}

const unique = <A>(items: ReadonlyArray<A>, key: (a: A) => string) => {
  const out = new Map<string, A>()
  for (const item of items) if (!out.has(key(item))) out.set(key(item), item)
  return [...out.values()]
}

export const agentsPage = (slug: string, params: URLSearchParams) => {
  const page = h("div", { id: "agents-page" })
  const dashboard = h("div", null, loadingState())
  const range = params.get("range") ?? "30d"
  const controls = h("form", { class: "row card", "aria-label": "Filters" }, loadingState("Loading the filters…"))
  const active = h("div", { class: "chips", id: "active-filters" })

  const drawControls = (seen: AgentsResponse | null) => {
    const byBot = seen?.breakdowns.by_bot ?? []
    const bot = choices("bot", "Any bot", unique(byBot, (r) => r.bot).map((r) => [r.bot, `${r.bot} (${r.vendor})`] as const), params.get("bot"))
    const vendor = choices("vendor", "Any vendor", unique(byBot, (r) => r.vendor).map((r) => [r.vendor, r.vendor] as const), params.get("vendor"))
    const seenKinds = unique(byBot, (r) => r.kind).map((r) => r.kind)
    const kind = choices("kind", "Any kind", (seenKinds.length > 0 ? seenKinds : AGENT_KINDS).map((k) => [k, kindLabel(k)] as const), params.get("kind"))
    const rangeSelect = h("select", { id: "filter-range", name: "range" }, RANGES.map((r) => h("option", { value: r, selected: r === range }, rangeLabel(r))))
    const verification = choices("verification", "Any verdict", VERDICTS.map((v) => [v, verdictLabel(v)] as const), params.get("verification"))
    clear(controls)
    controls.onsubmit = (event: Event) => event.preventDefault()
    // A choice applies at once (as on the other screens); focus comes back to it once the page is drawn again.
    for (const control of [rangeSelect, bot, vendor, kind, verification]) {
      control.addEventListener("change", () => {
        refocus = control.id
        setParams(slug, params, { [control.name]: control.value, offset: null })
      })
      restoreFocus(control)
    }
    append(controls, [
      h("div", null, h("label", { for: "filter-range" }, "Range"), rangeSelect),
      h("div", null, h("label", { for: "filter-bot" }, "Bot"), bot),
      h("div", null, h("label", { for: "filter-vendor" }, "Vendor"), vendor),
      h("div", null, h("label", { for: "filter-kind" }, "Kind"), kind),
      h("div", null, h("label", { for: "filter-verification" }, "Verification"), verification)
    ])
  }

  // The filters in force, each removable.
  const named: ReadonlyArray<readonly [string, string, (v: string) => string]> = [
    ["bot", "Bot", (v) => v],
    ["vendor", "Vendor", (v) => v],
    ["kind", "Kind", kindLabel],
    ["verification", "Verification", verdictLabel],
    ["status", "Status", (v) => v]
  ]
  for (const [name, label, show] of named) {
    const value = params.get(name)
    if (value) {
      append(active, [
        h("span", { class: "chip active" }, `${label}: ${show(value)}`, h("button", {
          type: "button",
          class: "remove",
          "aria-label": `Remove the ${label.toLowerCase()} filter`,
          onclick: () => setParams(slug, params, { [name]: null, offset: null })
        }, "×"))
      ])
    }
  }

  // One crawled page: its bots and their verdicts instead of the dashboard (the filters still apply).
  const path = params.get("path")
  if (path) {
    void get<AgentsResponse>(`/api/v1/me/brands/${slug}/agents?range=90d`).then((result) => drawControls(result.ok ? result.value : null))
    append(page, [
      tabs(slug, "agents"),
      brandTitle(slug, h("h1"), (name) => `AI crawlers and agents · ${name}`),
      controls,
      active,
      pageBotsSection(slug, params, path)
    ])
    return page
  }

  const query = pick(params, FILTERS)
  const withVerdict = (verdict: string) => {
    const q = new URLSearchParams(query)
    q.set("verification", verdict)
    return get<AgentsResponse>(`/api/v1/me/brands/${slug}/agents?${q.toString()}`)
  }
  const byBot = (result: Awaited<ReturnType<typeof withVerdict>>) =>
    new Map(result.ok ? result.value.breakdowns.by_bot.map((row) => [row.bot, row.hits] as const) : [])
  const filtered = ["bot", "vendor", "kind", "verification"].some((name) => params.get(name))
  const main = get<AgentsResponse>(`/api/v1/me/brands/${slug}/agents?${query.toString()}`)
  // The choices: everything seen over the longest range, unfiltered (the same answer when nothing is filtered).
  const seen = !filtered && range === "90d" ? main : get<AgentsResponse>(`/api/v1/me/brands/${slug}/agents?range=90d`)
  void seen.then((result) => drawControls(result.ok ? result.value : null))
  void Promise.all([main, withVerdict("verified"), withVerdict("spoofed")])
    .then(([result, verified, spoofed]) => {
      clear(dashboard)
      append(
        dashboard,
        result.ok
          ? drawDashboard(slug, params, result.value, { verified: byBot(verified), spoofed: byBot(spoofed) })
          : [unavailable(result.error, "The agent dashboard")]
      )
    })
  append(page, [
    brandNav(slug, "agents"),
    brandTitle(slug, h("h1"), (name) => `AI crawlers and agents · ${name}`),
    h("p", { class: "muted" }, "Which AI crawlers and agents fetch this brand's pages (server logs, log drains, the tracking tag). Filters apply to every figure; the address of this view can be shared."),
    controls,
    active,
    dashboard,
    pagesSection(slug, params)
  ])
  return page
}
