import {
  type AgentsResponse,
  type Brand,
  get,
  type IngestionHealthResponse,
  type Me,
  type PromptsResponse,
  type ScanStatusResponse,
  type SnapshotsResponse
} from "./api.js"
import { append, clear, copyButton, h } from "./dom.js"
import { PLAN_FOR, planLabel } from "./labels.js"
import { logSourcesPanel } from "./logSources.js"
import { loadingState } from "./kit.js"

/**
 * The getting-started checklist: add a brand, its competitors and prompts, a log source, engines or an
 * import, first data. Each step is checked against the account's real state (no flags kept anywhere),
 * says what it unlocks, and, where the plan gates it, which plan it needs.
 */

export const drainUrl = (siteId: string) => `${location.origin}/api/public/v1/agents/ingest/drain?site_id=${siteId}`

export interface Progress {
  readonly brand: boolean
  readonly prompts: boolean
  readonly logs: boolean
  readonly answers: boolean
  readonly data: boolean
}

interface BrandState {
  readonly progress: Progress
  readonly prompts: PromptsResponse | null
  readonly hits: number
  readonly tag: string | null
}

const brandState = async (brand: Brand, withTag: boolean): Promise<BrandState> => {
  const base = `/api/v1/me/brands/${brand.brand_slug}`
  const [prompts, ingestion, scans] = await Promise.all([
    get<PromptsResponse>(`${base}/prompts`),
    get<IngestionHealthResponse>(`${base}/ingestion`),
    get<ScanStatusResponse>(`${base}/scans`)
  ])
  const received = ingestion.ok && ingestion.value.channels.some((c) => c.last_received_at !== null)
  // The dashboard is the heaviest read: asked only when the cheap reads cannot tell, or for the tag snippet.
  const agents = received && !withTag ? null : await get<AgentsResponse>(`${base}/agents?range=30d`)
  const hits = agents?.ok ? agents.value.kpis.hits : 0
  const scanned = scans.ok && scans.value.engines.length > 0
  // Imported answers leave no scan behind: the snapshots tell.
  const snapshots = scanned ? null : await get<SnapshotsResponse>(`${base}/snapshots?range=90d`)
  const observed = (scans.ok && scans.value.engines.some((e) => e.observations > 0)) ||
    (snapshots?.ok === true && snapshots.value.snapshots.some((day) => day.total_responses > 0))
  return {
    prompts: prompts.ok ? prompts.value : null,
    hits,
    tag: agents?.ok ? agents.value.tag.snippet : null,
    progress: {
      brand: true,
      prompts: prompts.ok && prompts.value.count > 0,
      logs: received || hits > 0,
      answers: scanned || observed,
      data: received || hits > 0 || observed
    }
  }
}

const step = (
  done: boolean,
  current: boolean,
  number: number,
  title: string,
  unlocks: string,
  ...body: ReadonlyArray<Node | string | null>
) =>
  h(
    "li",
    { class: done ? "done" : current ? "current" : null, "data-step": number, "aria-current": current ? "step" : null },
    h("span", { class: "mark", "aria-hidden": "true" }, done ? "✓" : String(number)),
    h(
      "div",
      null,
      h("h3", null, title, h("span", { class: "sr-only" }, done ? " (done)" : " (to do)")),
      h("p", { class: "muted" }, `Unlocks: ${unlocks}`),
      ...body
    )
  )

/**
 * The checklist for one brand (or for none yet). `compact` draws the short form of the Brands page:
 * a progress bar and the next step only.
 */
export const checklist = (me: Me, brands: ReadonlyArray<Brand>, chosen: string | null, compact: boolean) => {
  const body = h("div", null, loadingState("Checking your set-up…"))
  const card = h("section", { class: "card", id: "onboarding", "aria-labelledby": "onboarding-title" }, h("h2", { id: "onboarding-title" }, compact ? "Get started" : "Set-up checklist"), body)
  const brand = brands.find((b) => b.brand_slug === chosen) ?? brands[0]
  const plan = me.plan
  const drainOk = plan.drain_ingest
  const batchOk = plan.batch_ingest ?? drainOk
  const planName = planLabel(plan.id)

  const draw = (state: BrandState | null) => {
    const progress: Progress = state?.progress ?? { brand: false, prompts: false, logs: false, answers: false, data: false }
    const flags = [progress.brand, progress.prompts, progress.logs, progress.answers, progress.data]
    const doneCount = flags.filter(Boolean).length
    const current = flags.indexOf(false)
    clear(body)
    if (compact && doneCount === flags.length) {
      card.remove()
      return
    }
    const slug = brand?.brand_slug ?? ""
    const promptCount = state?.prompts ? `${state.prompts.used_total} of ${state.prompts.limit} monitored prompts on your plan are in use.` : null
    const steps = [
      step(
        progress.brand,
        current === 0,
        1,
        "Add your brand",
        "a site id for your logs and tracking tag, and a place for competitors and prompts.",
        progress.brand
          ? h("p", null, `${brand!.brand_name} (${brand!.domain}) is set up.`)
          : h("p", null, h("a", { href: "#/brands?add=1" }, "Add a brand"), ": its name, website and industry.")
      ),
      step(
        progress.prompts,
        current === 1,
        2,
        "Name your competitors and the prompts to watch",
        "share of voice against your competitors, mentions and citations in AI answers.",
        h(
          "p",
          null,
          "Add the competitors you want to be compared with and the questions your customers ask AI assistants. ",
          promptCount
        ),
        brand
          ? h(
            "p",
            { class: "actions" },
            h("a", { href: `#/brands/${slug}/competitors` }, "Competitors"),
            h("a", { href: `#/brands/${slug}/prompts` }, "Monitored prompts")
          )
          : null
      ),
      step(
        progress.logs,
        current === 2,
        3,
        "Connect a log source",
        "the agent dashboard: which AI crawlers and agents read your pages, verified against their published IP ranges.",
        brand
          ? h(
            "div",
            null,
            h(
              "p",
              null,
              `Send your server or CDN logs. Log drains need the ${planLabel(PLAN_FOR.drain)} plan, shipped log files the ${planLabel(PLAN_FOR.batch)} plan; `,
              drainOk
                ? `your ${planName} plan includes both.`
                : batchOk
                ? `your ${planName} plan includes log files, not drains.`
                : `your ${planName} plan includes neither, so start with the tracking tag below (any plan).`
            ),
            h("p", null, "Site id: ", h("code", null, brand.site_id), " ", copyButton(() => brand.site_id, "Copy", "Copy the site id")),
            // The source every plan can use leads; the others follow, the locked ones as one short list per plan.
            logSourcesPanel(drainUrl(brand.site_id), brand.site_id, { plan: plan.id, drain: drainOk, batch: batchOk }, !compact && !progress.logs, {
              email: me.user.email,
              tag: state?.tag
                ? h(
                  "div",
                  { "data-source": "Tracking tag" },
                  h("h3", null, "Tracking tag ", h("span", { class: "pill-plan" }, "any plan")),
                  h("p", { class: "muted" }, "Paste it into your site's pages: it counts the AI agents that run JavaScript and the visitors AI answers send."),
                  h("pre", null, state.tag),
                  copyButton(() => state.tag ?? "", "Copy", "Copy the tracking tag")
                )
                : h("p", null, "Any plan: the tracking tag, copied from the ", h("a", { href: `#/brands/${slug}/agents` }, "agent dashboard"), ".")
            })
          )
          : h("p", { class: "muted" }, "Add a brand first: the instructions are filled in with its site id.")
      ),
      step(
        progress.answers,
        current === 3,
        4,
        "Ask the answer engines, or import answers",
        "the visibility page: mention rate, share of voice and scores per engine, with their uncertainty.",
        h(
          "p",
          null,
          `The server asks ChatGPT, Perplexity, Gemini and the others your prompts every ${brand?.scan_frequency_hours ?? "few"} hours (your ${planName} plan), `,
          "on the engines its operator has configured. On the brand's Settings you can ask for a scan now (paid plans) and import answers you collected elsewhere (any plan)."
        ),
        brand
          ? h(
            "p",
            { class: "actions" },
            h("a", { href: `#/brands/${slug}/settings` }, "Scan now or import answers"),
            h("a", { href: `#/brands/${slug}/visibility` }, "See the last scan")
          )
          : null
      ),
      step(
        progress.data,
        current === 4,
        5,
        "Read your first data",
        "trends, alerts and the API: everything the dashboards show, also through API keys and the MCP server.",
        brand
          ? h(
            "p",
            { class: "actions" },
            h("a", { href: `#/brands/${slug}/agents` }, "Agent dashboard"),
            h("a", { href: `#/brands/${slug}/visibility` }, "Visibility"),
            h("a", { href: "#/settings/webhooks" }, "Alerts (webhooks)")
          )
          : null
      )
    ]
    append(body, [
      brands.length > 1 && !compact
        ? h(
          "div",
          { class: "form-row" },
          h(
            "div",
            { class: "field" },
            h("label", { for: "onboarding-brand" }, "Brand"),
            h(
              "select",
              { id: "onboarding-brand", onchange: (event: Event) => {
                if (event.target instanceof HTMLSelectElement) location.hash = `#/start?brand=${event.target.value}`
              } },
              brands.map((b) => h("option", { value: b.brand_slug, selected: b.brand_slug === brand?.brand_slug }, b.brand_name))
            )
          )
        )
        : null,
      h("p", { id: "onboarding-count" }, `${doneCount} of ${flags.length} steps done${brand ? ` for ${brand.brand_name}` : ""}.`),
      h("div", { class: `progress w${doneCount}`, role: "presentation" }, h("span")),
      compact
        ? h("ol", { class: "steps" }, steps[current]!, h("li", null, h("span"), h("a", { href: `#/start${brand ? `?brand=${slug}` : ""}` }, "See every step")))
        : h("ol", { class: "steps" }, steps)
    ])
  }

  if (brand === undefined) draw(null)
  else void brandState(brand, !compact).then(draw)
  return card
}

/** #/start: the whole checklist for one brand. */
export const startPage = (me: Me, brands: ReadonlyArray<Brand>, params: URLSearchParams) =>
  h(
    "div",
    { id: "start-page" },
    h("h1", null, "Getting started"),
    h("p", { class: "muted" }, "Five steps from an empty account to your first AI-visibility and crawler figures."),
    checklist(me, brands, params.get("brand"), false)
  )
