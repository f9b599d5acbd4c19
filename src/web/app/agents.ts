import { type AgentPagesResponse, type AgentsResponse, type ApiError, describeError, get } from "./api.js"
import { chart, PALETTE } from "./charts.js"
import { append, clear, formatDate, formatNumber, formatPercent, h } from "./dom.js"

/**
 * The agent dashboard of one brand: KPIs, trend, breakdowns, the crawled-pages table.
 * State lives in the hash query (#/brands/<slug>/agents?range=30d&kind=...&sort=hits&offset=0),
 * so a view can be shared and the back button works.
 */

const KINDS = ["training_crawler", "search_crawler", "browsing_agent", "agentic_browser", "mcp_client"]
const FILTERS = ["range", "bot", "vendor", "kind", "verification"] as const
const VERDICTS = ["verified", "spoofed", "unverified"]

/** Per bot, its verified and spoofed hits (the same filters with verification=verified / spoofed). */
type VerdictsByBot = { readonly verified: Map<string, number>; readonly spoofed: Map<string, number> }
const share = (part: number | undefined, whole: number) => (whole === 0 ? "–" : formatPercent((part ?? 0) / whole))
const PAGE_PARAMS = ["folder", "status", "q", "sort", "dir", "limit", "offset"] as const

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

export const unavailable = (error: ApiError, what: string) =>
  h(
    "div",
    { class: error.status === 501 ? "notice" : "error", role: "status", "data-status": error.status },
    error.status === 501
      ? `${what} is not available on this server yet: the endpoint answers 501 (not implemented). This page draws it as soon as it does.`
      : error.status === 404
      ? `${what}: this brand does not exist in your account.`
      : `${what}: ${describeError(error)}`
  )

export const tabs = (slug: string, active: "agents" | "visibility") =>
  h(
    "div",
    { class: "tabs" },
    h("a", { href: "#/brands" }, "← Brands"),
    h("a", { href: `#/brands/${slug}/agents`, class: active === "agents" ? "active" : null }, "Agent dashboard"),
    h("a", { href: `#/brands/${slug}/visibility`, class: active === "visibility" ? "active" : null }, "Visibility")
  )

const kpi = (label: string, value: string) => h("div", { class: "kpi" }, h("div", { class: "muted" }, label), h("div", { class: "value" }, value))

const table = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number | Node>>, numeric: ReadonlyArray<number> = []) =>
  h(
    "table",
    null,
    h("thead", null, h("tr", null, headers.map((name, i) => h("th", { class: numeric.includes(i) ? "num" : null }, name)))),
    h(
      "tbody",
      null,
      rows.length === 0
        ? h("tr", null, h("td", { colspan: headers.length, class: "muted" }, "No data in this range."))
        : rows.map((row) => h("tr", null, row.map((cell, i) => h("td", { class: numeric.includes(i) ? "num" : null }, typeof cell === "number" ? formatNumber(cell) : cell))))
    )
  )

const drawDashboard = (data: AgentsResponse, verdicts: VerdictsByBot) => {
  const kinds = KINDS.filter((kind) => data.trend.some((point) => (point.by_kind[kind] ?? 0) > 0))
  return [
    data.retention_limited
      ? h("div", { class: "notice" }, `Crawler-filtered figures cover ${data.coverage_from} onwards (raw-hit retention).`)
      : null,
    data.ranges_snapshot === undefined
      ? null
      : h("p", { class: "muted", id: "ranges-snapshot" }, `Verdicts checked against the operators' published IP ranges of ${data.ranges_snapshot}.`),
    h(
      "div",
      { class: "kpis", id: "agent-kpis" },
      kpi("Crawler hits", formatNumber(data.kpis.hits)),
      kpi("Pages fetched", formatNumber(data.kpis.pages)),
      kpi("Bots seen", formatNumber(data.kpis.bots)),
      kpi("Error rate", formatPercent(data.kpis.error_rate)),
      ...(data.breakdowns.by_verification ?? []).filter((v) => v.verification !== "unverified").map((v) =>
        kpi(v.verification === "verified" ? "Verified" : "Spoofed", share(v.hits, data.kpis.hits))
      )
    ),
    h(
      "div",
      { class: "card" },
      h("h2", null, "Crawler hits per day, by kind"),
      chart("Crawler hits per day by kind", {
        type: "bar",
        data: {
          labels: data.trend.map((point) => point.date),
          datasets: (kinds.length > 0 ? kinds : ["hits"]).map((kind, i) => ({
            label: kind,
            data: data.trend.map((point) => kinds.length > 0 ? point.by_kind[kind] ?? 0 : point.hits),
            backgroundColor: PALETTE[i % PALETTE.length]!
          }))
        },
        options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } }
      })
    ),
    h(
      "div",
      { class: "grid2" },
      h(
        "div",
        { class: "card" },
        h("h2", null, "By vendor"),
        data.breakdowns.by_vendor.length === 0
          ? h("p", { class: "muted" }, "No crawler hits in this range.")
          : chart("Hits by vendor", {
            type: "doughnut",
            data: {
              labels: data.breakdowns.by_vendor.map((row) => row.vendor),
              datasets: [{ data: data.breakdowns.by_vendor.map((row) => row.hits), backgroundColor: PALETTE }]
            },
            options: { plugins: { legend: { position: "right" } } }
          }, 200)
      ),
      h(
        "div",
        { class: "card" },
        h("h2", null, "By kind"),
        data.breakdowns.by_kind.length === 0
          ? h("p", { class: "muted" }, "No crawler hits in this range.")
          : chart("Hits by kind", {
            type: "bar",
            data: {
              labels: data.breakdowns.by_kind.map((row) => row.kind),
              datasets: [{ label: "hits", data: data.breakdowns.by_kind.map((row) => row.hits), backgroundColor: PALETTE[0]! }]
            },
            options: { indexAxis: "y", plugins: { legend: { display: false } } }
          }, 200)
      )
    ),
    h(
      "div",
      { class: "grid2" },
      h(
        "div",
        { class: "card" },
        h("h2", null, "By bot"),
        table(
          ["Bot", "Vendor", "Kind", "Hits", "Verified", "Spoofed"],
          data.breakdowns.by_bot.map((row) => [
            row.bot,
            row.vendor,
            row.kind,
            row.hits,
            share(verdicts.verified.get(row.bot), row.hits),
            share(verdicts.spoofed.get(row.bot), row.hits)
          ]),
          [3, 4, 5]
        )
      ),
      h(
        "div",
        { class: "card" },
        h("h2", null, "By status"),
        table(["Status", "Hits"], data.breakdowns.by_status.map((row) => [row.status === null ? "unknown" : String(row.status), row.hits]), [1])
      )
    ),
    h(
      "div",
      { class: "card" },
      h("h2", null, "Tracking tag"),
      h("p", { class: "muted" }, "Paste into your site's HTML to also see AI agents that run JavaScript:"),
      h("pre", null, data.tag.snippet)
    )
  ]
}

const pagesSection = (slug: string, params: URLSearchParams) => {
  const section = h("div", { class: "card", id: "agent-pages" })
  const body = h("div")
  const sort = params.get("sort") ?? "hits"
  const dir = params.get("dir") ?? (sort === "path" ? "asc" : "desc")
  const limit = Number(params.get("limit") ?? "50")
  const offset = Number(params.get("offset") ?? "0")

  const input = (name: string, placeholder: string) =>
    h("input", { name, placeholder, value: params.get(name) ?? "", size: 14 })
  const folder = input("folder", "folder, or /")
  const status = input("status", "ok, error, 404")
  const q = input("q", "path contains")
  const pageSize = h("select", { name: "limit" }, [25, 50, 100, 500].map((n) => h("option", { value: n, selected: n === limit }, `${n} per page`)))
  const filters = h(
    "form",
    {
      class: "row",
      onsubmit: (event: Event) => {
        event.preventDefault()
        setParams(slug, params, { folder: folder.value.trim(), status: status.value.trim(), q: q.value.trim(), limit: pageSize.value, offset: null })
      }
    },
    h("div", null, h("label", null, "Folder"), folder),
    h("div", null, h("label", null, "Status"), status),
    h("div", null, h("label", null, "Search"), q),
    h("div", null, h("label", null, "Page size"), pageSize),
    h("div", null, h("button", { type: "submit" }, "Apply"))
  )

  const sortHeader = (column: string, label: string, numeric: boolean) => {
    const active = sort === column
    const nextDir = active ? (dir === "asc" ? "desc" : "asc") : (column === "path" ? "asc" : "desc")
    return h(
      "th",
      { class: numeric ? "num" : null, "aria-sort": active ? (dir === "asc" ? "ascending" : "descending") : null },
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
      h(
        "table",
        { id: "pages-table" },
        h("thead", null, h("tr", null, sortHeader("path", "Path", false), sortHeader("hits", "Hits", true), sortHeader("errors", "Errors", true), sortHeader("uniques", "Bots", true), h("th", null, "Last seen"))),
        h(
          "tbody",
          null,
          data.pages.length === 0
            ? h("tr", null, h("td", { colspan: 5, class: "muted" }, "No crawled pages match."))
            : data.pages.map((page) =>
              h(
                "tr",
                null,
                h("td", null, h("code", null, page.path)),
                h("td", { class: "num" }, formatNumber(page.hits)),
                h("td", { class: "num" }, formatNumber(page.errors)),
                h("td", { class: "num", title: page.bots.join(", ") }, formatNumber(page.uniques)),
                h("td", null, formatDate(page.last_seen))
              )
            )
        )
      ),
      h(
        "div",
        { class: "pager" },
        h("button", { type: "button", class: "secondary", disabled: data.offset === 0, onclick: () => setParams(slug, params, { offset: String(Math.max(0, data.offset - data.limit)) }) }, "← Previous"),
        h("span", { class: "muted", id: "pages-range" }, data.total === 0 ? "0 pages" : `${data.offset + 1}–${last} of ${formatNumber(data.total)} pages`),
        h("button", { type: "button", class: "secondary", disabled: last >= data.total, onclick: () => setParams(slug, params, { offset: String(data.offset + data.limit) }) }, "Next →")
      )
    ])
  })
  append(section, [h("h2", null, "Crawled pages"), filters, body])
  return section
}

export const agentsPage = (slug: string, params: URLSearchParams) => {
  const page = h("div", { id: "agents-page" })
  const dashboard = h("div", null, h("p", { class: "muted" }, "Loading…"))
  const range = params.get("range") ?? "30d"
  const bot = h("input", { name: "bot", placeholder: "any bot", value: params.get("bot") ?? "", size: 14 })
  const vendor = h("input", { name: "vendor", placeholder: "any vendor", value: params.get("vendor") ?? "", size: 14 })
  const kind = h("select", { name: "kind" }, h("option", { value: "" }, "any kind"), KINDS.map((k) => h("option", { value: k, selected: params.get("kind") === k }, k)))
  const rangeSelect = h("select", { name: "range" }, ["7d", "30d", "90d"].map((r) => h("option", { value: r, selected: r === range }, `last ${r}`)))
  const verification = h(
    "select",
    { name: "verification" },
    h("option", { value: "" }, "any verdict"),
    VERDICTS.map((v) => h("option", { value: v, selected: params.get("verification") === v }, v))
  )
  const controls = h(
    "form",
    {
      class: "row card",
      onsubmit: (event: Event) => {
        event.preventDefault()
        setParams(slug, params, { range: rangeSelect.value, bot: bot.value.trim(), vendor: vendor.value.trim(), kind: kind.value, verification: verification.value, offset: null })
      }
    },
    h("div", null, h("label", null, "Range"), rangeSelect),
    h("div", null, h("label", null, "Bot"), bot),
    h("div", null, h("label", null, "Vendor"), vendor),
    h("div", null, h("label", null, "Kind"), kind),
    h("div", null, h("label", null, "Verification"), verification),
    h("div", null, h("button", { type: "submit" }, "Apply"))
  )
  const query = pick(params, FILTERS)
  const withVerdict = (verdict: string) => {
    const q = new URLSearchParams(query)
    q.set("verification", verdict)
    return get<AgentsResponse>(`/api/v1/me/brands/${slug}/agents?${q.toString()}`)
  }
  const byBot = (result: Awaited<ReturnType<typeof withVerdict>>) =>
    new Map(result.ok ? result.value.breakdowns.by_bot.map((row) => [row.bot, row.hits] as const) : [])
  void Promise.all([get<AgentsResponse>(`/api/v1/me/brands/${slug}/agents?${query.toString()}`), withVerdict("verified"), withVerdict("spoofed")])
    .then(([result, verified, spoofed]) => {
      clear(dashboard)
      append(
        dashboard,
        result.ok
          ? drawDashboard(result.value, { verified: byBot(verified), spoofed: byBot(spoofed) })
          : [unavailable(result.error, "The agent dashboard")]
      )
    })
  append(page, [
    tabs(slug, "agents"),
    h("h1", null, `AI crawlers and agents · ${slug}`),
    h("p", { class: "muted" }, "Which AI crawlers and agents fetch this brand's pages (server logs, log drains, the tracking tag). Filters apply to every figure."),
    controls,
    dashboard,
    pagesSection(slug, params)
  ])
  return page
}
