import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import type { Page } from "playwright-core"
import { haveChromium, openBrowser, type Served, startServer } from "./chromium.js"

/**
 * The screens of a brand's data in a real browser, on the demo workspace: what is added through
 * them is what the public API then answers, each screen draws its data, and its state lives in
 * the URL (a reload shows the same view).
 */
describe.skipIf(!haveChromium)("brand screens in headless Chromium", () => {
  let served: Served
  let browser: Awaited<ReturnType<typeof openBrowser>>
  let page: Page
  let key: string

  const rows = (selector: string) => page.locator(`${selector} tbody tr`)
  const publicGet = async <A>(path: string): Promise<A> => {
    const response = await fetch(`${served.base}/api/public/v1${path}`, { headers: { authorization: `Bearer ${key}` } })
    expect(response.status).toBe(200)
    return (await response.json()) as A
  }
  /** A session call from the page itself (same origin, its cookie). */
  const sessionPost = (path: string, body: unknown) =>
    page.evaluate(async ({ body, path }) => {
      const response = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      return { status: response.status, body: await response.json() as Record<string, unknown> }
    }, { path, body })

  beforeAll(async () => {
    // Seven days of demo answers: every screen has data, and the workspace is built quickly.
    ;[served, browser] = await Promise.all([startServer({ DEMO: "1", DEMO_DAYS: "7" }), openBrowser()])
    page = browser.page
    await page.goto(`${served.base}/#/signin`)
    await page.fill("#email", "demo@example.com")
    await page.fill("#password", "demo-password-2026")
    await page.click("#submit")
    await page.getByRole("heading", { name: "Brands" }).waitFor()
    const created = await sessionPost("/api/v1/me/api-keys", { name: "screens test" })
    expect(created.status).toBe(201)
    key = String(created.body["key"])
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    await served?.stop()
  })

  it("adds a competitor with aliases and a pin through the screen, and the API then tracks it", async () => {
    await page.goto(`${served.base}/#/brands/northwind-crm/competitors`)
    await rows("#competitors-table").first().waitFor()
    // The title names the brand once its name has been read (it starts with the slug).
    await page.locator("h1", { hasText: "Competitors · Northwind CRM" }).waitFor()
    expect(await page.locator("h1").textContent()).toBe("Competitors · Northwind CRM")
    expect(await rows("#competitors-table").count()).toBe(5)
    await page.getByLabel("Name", { exact: true }).fill("Zephyr CRM")
    await page.getByLabel("Domain", { exact: true }).fill("zephyrcrm.com")
    await page.getByLabel("Other names (optional)").fill("Zephyr, ZephyrHQ")
    await page.getByLabel("Pin to the top").check()
    await page.getByRole("button", { name: "Add competitor" }).click()
    await page.locator("#competitors-table", { hasText: "Zephyr CRM" }).waitFor()
    expect(await rows("#competitors-table").count()).toBe(6)

    const metrics = await publicGet<{ tracked_competitors: Array<string>; ranking: Array<{ name: string; is_pinned: boolean; domain: string }> }>(
      "/industry/metrics?brand=northwind-crm&range=7d"
    )
    expect(metrics.tracked_competitors).toContain("Zephyr CRM")
    expect(metrics.ranking.find((row) => row.name === "Zephyr CRM")).toMatchObject({ is_pinned: true, domain: "zephyrcrm.com" })

    // The same name again: a sentence, not a status code.
    await page.getByLabel("Name", { exact: true }).fill("Zephyr CRM")
    await page.getByLabel("Domain", { exact: true }).fill("zephyrcrm.com")
    await page.getByRole("button", { name: "Add competitor" }).click()
    const error = page.locator("#competitors-screen [role=alert]")
    await error.waitFor()
    expect(await error.textContent()).toBe("Zephyr CRM is already a competitor of this brand.")
  })

  it("adds a monitored prompt with a topic and an intent, shows the plan's count and cap, and the API lists it", async () => {
    await page.goto(`${served.base}/#/brands/northwind-crm/prompts`)
    await rows("#prompts-table").first().waitFor()
    expect(await page.locator("#prompt-usage").textContent()).toBe("40 of 250 monitored prompts in use across your brands (20 on this brand).")
    await page.getByLabel("Prompt", { exact: true }).fill("which crm works offline")
    await page.getByLabel("Topic (optional)").fill("crm software")
    await page.getByLabel("Intent (optional)").selectOption("comparison")
    await page.getByRole("button", { name: "Add prompt" }).click()
    await page.locator("#prompts-table", { hasText: "which crm works offline" }).waitFor()
    expect(await page.locator("#prompt-usage").textContent()).toBe("41 of 250 monitored prompts in use across your brands (21 on this brand).")

    const listed = await publicGet<{ prompts: Array<{ prompt: string; topic: string; intent: string }>; used_total: number }>("/brands/northwind-crm/prompts")
    expect(listed.prompts.find((p) => p.prompt === "which crm works offline")).toMatchObject({ topic: "crm software", intent: "comparison" })
    expect(listed.used_total).toBe(41)

    // The topic filter is state in the URL: choosing one narrows the list, a reload keeps it.
    await page.getByLabel("Topic", { exact: true }).selectOption("crm software")
    await page.waitForURL(/prompts\?topic=crm\+software$/)
    await page.reload()
    await rows("#prompts-table").first().waitFor()
    const topics = await page.locator("#prompts-table tbody tr td:nth-child(2)").allTextContents()
    expect(topics.length).toBeGreaterThan(1)
    expect(new Set(topics)).toEqual(new Set(["crm software"]))
  })

  it("draws every screen's data on the demo workspace, with human labels and the state of the URL", async () => {
    const base = `${served.base}/#/brands/northwind-crm`

    await page.goto(`${base}/settings`)
    await page.locator("#site-id-value").waitFor()
    expect(await page.locator("#site-id-value").textContent()).toMatch(/^[0-9a-f-]{36}$/)

    await page.goto(`${base}/mentions?sentiment=neg&region=US`)
    await rows("#mentions-table").first().waitFor()
    expect(await page.locator("#mentions-sentiment").inputValue()).toBe("neg")
    expect(new Set(await page.locator("#mentions-table tbody tr td:nth-child(6)").allTextContents())).toEqual(new Set(["Negative"]))
    const engines = await page.locator("#mentions-table tbody tr td:nth-child(2)").allTextContents()
    expect(engines.every((engine) => !/_/.test(engine) && engine !== engine.toLowerCase())).toBe(true)
    expect(await page.locator("#mention-scope").textContent()).toContain("region US, language en")

    await page.goto(`${base}/citations?type=ugc`)
    await rows("#citations-table").first().waitFor()
    expect(new Set(await page.locator("#citations-table tbody tr td:nth-child(2)").allTextContents())).toEqual(new Set(["Forums and social"]))
    await rows("#gap-table").first().waitFor()
    expect(await rows("#gap-table").count()).toBeGreaterThan(0)

    await page.goto(`${base}/fanouts?engine=perplexity`)
    await page.locator("#fanout-groups > li").first().waitFor()
    expect(await page.locator("#fanouts-engine").inputValue()).toBe("perplexity")
    const summaries = await page.locator("#fanout-groups summary").allTextContents()
    expect(summaries.length).toBeGreaterThan(0)
    expect(summaries.every((text) => text.includes("· Perplexity ·"))).toBe(true)

    await page.goto(`${base}/topics`)
    await rows("#topics-table").first().waitFor()
    expect(await page.locator("#topics-table tbody tr td:first-child").allTextContents()).toContain("crm software")

    // The ranking's topic filter: a choice writes it into the URL, and the table is the topic's.
    await page.goto(`${base}/ranking`)
    await rows("#ranking-table").first().waitFor()
    await page.getByLabel("Topic").selectOption("pricing")
    await page.waitForURL(/ranking\?topic=pricing$/)
    await page.locator("#ranking", { hasText: "prompts about “pricing”" }).waitFor()
    expect(await page.locator("#ranking-table tbody tr", { hasText: "Northwind CRM (you)" }).count()).toBe(1)
    // Shares with their interval's two ends, and what an interval means.
    expect(await page.locator("#ranking-table tbody").textContent()).toMatch(/\d+\.\d% \(\d+\.\d–\d+\.\d%\)/)
    expect(await page.locator("#ranking").textContent()).toContain("95% intervals: how much the figure moves from one asking to the next")
    expect(await page.locator("#ranking").textContent()).not.toContain("±")

    // A second brand's citations, gap (one topic of its prompts) and ranking are that brand's own.
    const second = `${served.base}/#/brands/bramble-outfitters`
    await page.goto(`${second}/citations`)
    await rows("#citations-table").first().waitFor()
    const cited = await page.locator("#citations-table tbody tr td:first-child").allTextContents()
    expect(cited).toContain("brambleoutfitters.com")
    expect(cited).not.toContain("northwindcrm.com")
    await page.getByLabel("Topic").selectOption("rain jackets")
    await page.waitForURL(/citations\?topic=rain(%20|\+)jackets$/)
    await page.locator("#gap", { hasText: "prompts about “rain jackets”" }).waitFor()
    const gapOfTopic = await publicGet<{ count: number; domains: Array<{ domain: string }> }>("/industry/gap?brand=bramble-outfitters&topic=rain%20jackets")
    expect(gapOfTopic.count).toBeGreaterThan(0)
    expect(await page.locator("#gap-table tbody tr td:first-child").allTextContents()).toEqual(gapOfTopic.domains.map((d) => d.domain))
    await page.goto(`${second}/ranking`)
    await page.locator("h1", { hasText: "Ranking · Bramble Outfitters" }).waitFor()
    expect(await page.locator("#ranking-table tbody tr", { hasText: "Bramble Outfitters (you)" }).count()).toBe(1)

    await page.goto(`${base}/competitors?competitor=Pipeline.io`)
    await rows("#competitor-detail").first().waitFor()
    expect(await page.locator("#competitor-detail table").count()).toBe(2)

    await page.goto(`${served.base}/#/portfolio`)
    await rows("#portfolio-table").first().waitFor()
    expect(await page.locator("#portfolio-table tbody tr td:first-child").allTextContents()).toEqual(["Northwind CRM", "Bramble Outfitters"])
    expect(await page.locator("#portfolio-table tbody tr td:nth-child(2)").first().textContent()).toMatch(/^\d+\.\d \(\d+\.\d–\d+\.\d\)$/)
    expect(await page.locator("#portfolio").textContent()).toContain("not how other prompts would fare")

    // The brand's navigation reaches every screen.
    await page.goto(`${base}/mentions`)
    const nav = page.getByRole("navigation", { name: "Brand pages" })
    for (const name of ["Mentions", "Ranking", "Competitors", "Prompts", "Topics", "Citations", "Fan-outs", "Settings"]) {
      expect(await nav.getByRole("link", { name, exact: true }).count()).toBe(1)
    }
    expect(browser.pageErrors).toEqual([])
  })

  it("shows every brand's share for one engine with its interval, the same on Visibility, Ranking and Competitors", async () => {
    interface Row { name: string; share: number; is_own: boolean; share_ci95: [number, number] | null; delta_ci95: [number, number] | null; significant: boolean }
    const api = await publicGet<{ engine: string; region: string; ranking: Array<Row> }>("/industry/ranking?brand=northwind-crm&engine=chatgpt")
    expect([api.engine, api.region]).toEqual(["chatgpt", "all"])
    const top = api.ranking.find((row) => !row.is_own)!
    const pct = (x: number) => (x * 100).toFixed(1)
    const expected = `${pct(top.share)}% (${pct(top.share_ci95![0])}–${pct(top.share_ci95![1])}%)`
    const shareOf = (name: string) => page.locator(`tr[data-brand="${name}"] [data-share]`)

    // The engine filter applies on change (no Apply button) and goes into the URL.
    await page.goto(`${served.base}/#/brands/northwind-crm/visibility`)
    await page.locator("#share-table tbody tr").first().waitFor()
    expect(await page.locator("#visibility-page button", { hasText: "Apply" }).count()).toBe(0)
    await page.getByLabel("Engine", { exact: true }).selectOption("chatgpt")
    await page.waitForURL(/visibility\?engine=chatgpt$/)
    await page.locator("#share-scope", { hasText: "ChatGPT, every region and language" }).waitFor()
    await shareOf(top.name).waitFor()
    expect(await shareOf(top.name).textContent()).toBe(expected)
    // The change with its n.s. marker when its interval includes 0 (or "new" without a previous period).
    const change = await page.locator(`#share-table tr[data-brand="${top.name}"] td`).nth(4).textContent()
    expect(change).toMatch(top.delta_ci95 === null ? /^new$/ : top.significant ? /^[+−]\d+\.\d pt$/ : /^[+−]\d+\.\d pt \(n\.s\.\)$/)
    expect(await page.locator("#share-table tbody tr[data-brand]").count()).toBe(api.ranking.length)

    // Ranking and Competitors say the same for the same scope.
    await page.goto(`${served.base}/#/brands/northwind-crm/ranking?engine=chatgpt`)
    await page.locator("#ranking-scope", { hasText: "ChatGPT" }).waitFor()
    expect(await page.locator(`#ranking-table tr[data-brand="${top.name}"] [data-share]`).textContent()).toBe(expected)
    expect(await page.getByLabel("Engine", { exact: true }).inputValue()).toBe("chatgpt")
    await page.goto(`${served.base}/#/brands/northwind-crm/competitors?engine=chatgpt`)
    await page.locator(`#competitors-table tr[data-brand="${top.name}"]`).waitFor()
    expect(await page.locator(`#competitors-table tr[data-brand="${top.name}"] [data-share]`).textContent()).toBe(expected)

    // A region narrows the population, and the screen says so.
    await page.goto(`${served.base}/#/brands/northwind-crm/ranking?engine=chatgpt`)
    await page.locator("#ranking-scope", { hasText: "ChatGPT" }).waitFor()
    await page.getByLabel("Region", { exact: true }).selectOption("US")
    await page.waitForURL(/ranking\?engine=chatgpt&region=US$/)
    await page.locator("#ranking-scope", { hasText: "region US (every language)" }).waitFor()

    // The gap of one topic of the second brand: its rows, hooked by domain, are the API's.
    const gap = await publicGet<{ domains: Array<{ domain: string }> }>("/industry/gap?brand=bramble-outfitters&topic=rain%20jackets")
    expect(gap.domains.length).toBeGreaterThan(0)
    await page.goto(`${served.base}/#/brands/bramble-outfitters/citations?topic=rain%20jackets`)
    await page.locator("#gap-table tbody tr").first().waitFor()
    expect(await page.locator("#gap-table tr[data-gap-domain]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-gap-domain"))))
      .toEqual(gap.domains.map((d) => d.domain))
    // The second brand's competitor detail is its own (not the primary brand's).
    const competitor = (await publicGet<{ ranking: Array<Row> }>("/industry/ranking?brand=bramble-outfitters")).ranking.find((row) => !row.is_own)!.name
    await page.goto(`${served.base}/#/brands/bramble-outfitters/competitors?competitor=${encodeURIComponent(competitor)}`)
    await page.locator("#competitor-detail table").first().waitFor()
    expect(await page.locator("#competitor-detail table").count()).toBe(2)
    expect(browser.pageErrors).toEqual([])
  })

  it("lists the agent catalog with each agent's verification methods, filters it from the URL, and is reached from the agent dashboard", async () => {
    const api = await page.evaluate(async () => (await fetch("/api/v1/catalog")).json() as Promise<{
      agents: Array<{ bot: string; vendor: string; kind: string; verification_methods: Array<string> }>
    }>)
    await page.goto(`${served.base}/#/brands`)
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Agent catalog" }).click()
    await page.waitForURL(/#\/catalog$/)
    await rows("#catalog-table").first().waitFor()
    const bots = () => page.locator("#catalog-table tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-bot")))
    // Fifty a page, in catalog order; the pager's place goes into the URL.
    expect(await page.locator("#catalog-count").textContent()).toBe(`${api.agents.length} agents.`)
    expect(await bots()).toEqual(api.agents.slice(0, 50).map((a) => a.bot))
    // Human labels: kinds and methods in words, "None published" where the operator publishes nothing.
    const gptbot = page.locator("#catalog-table tr[data-bot=GPTBot] td")
    expect(await gptbot.allTextContents()).toEqual(["GPTBot", "OpenAI", "Training crawler", "IP ranges", "platform.openai.com"])
    expect(await page.locator("#catalog-table tr[data-bot=Bytespider] td").nth(3).textContent()).toBe("None published")
    expect((await page.locator("#catalog-table tbody tr td:nth-child(3)").allTextContents()).some((kind) => kind.includes("_"))).toBe(false)
    await page.locator("#catalog-agents").getByRole("button", { name: "Next" }).click()
    await page.waitForURL(/#\/catalog\?offset=50$/)
    await page.locator(`#catalog-table tr[data-bot="${api.agents[50]!.bot}"]`).waitFor()
    expect(await bots()).toEqual(api.agents.slice(50, 100).map((a) => a.bot))
    await page.goto(`${served.base}/#/catalog?q=yandexadditional`)
    await page.locator("#catalog-count", { hasText: "Showing" }).waitFor()
    expect(await page.locator("#catalog-table tr[data-bot=YandexAdditional] td").nth(3).textContent()).toBe("Reverse DNS")

    // Filters apply on change (no Apply button; the search field on Enter) and go into the URL; a reload shows the same view.
    expect(await page.locator("#catalog-screen button", { hasText: "Apply" }).count()).toBe(0)
    await page.getByLabel("Search").fill("")
    await page.getByLabel("Search").press("Enter")
    await page.waitForURL(/#\/catalog$/)
    await page.locator("#catalog-count").waitFor()
    await page.getByLabel("Kind").selectOption("training_crawler")
    await page.waitForURL(/#\/catalog\?kind=training_crawler$/)
    await page.locator("#catalog-count", { hasText: "Showing" }).waitFor()
    await page.getByLabel("Verification").selectOption("none")
    await page.waitForURL(/#\/catalog\?kind=training_crawler&method=none$/)
    await page.reload()
    await page.locator("#catalog-count", { hasText: "Showing" }).waitFor()
    const expected = api.agents.filter((a) => a.kind === "training_crawler" && a.verification_methods.length === 0).map((a) => a.bot)
    expect(await page.locator("#catalog-count").textContent()).toBe(`Showing ${expected.length} agents of ${api.agents.length}.`)
    expect(await bots()).toEqual(expected.slice(0, 50))
    expect(new Set(await page.locator("#catalog-table tbody tr td:nth-child(4)").allTextContents())).toEqual(new Set(["None published"]))
    expect(await page.getByLabel("Kind").inputValue()).toBe("training_crawler")

    await page.goto(`${served.base}/#/catalog?q=claude&kind=search_crawler`)
    await page.locator("#catalog-count", { hasText: "Showing" }).waitFor()
    const claude = api.agents.filter((a) => a.kind === "search_crawler" && `${a.bot} ${a.vendor}`.toLowerCase().includes("claude")).map((a) => a.bot)
    expect(claude).toContain("Claude-SearchBot")
    expect(await bots()).toEqual(claude)
    expect(await page.getByLabel("Search").inputValue()).toBe("claude")

    // A bot's row of the agent dashboard links to its entry; the chip shows every agent again.
    await page.goto(`${served.base}/#/brands/northwind-crm/agents?range=30d`)
    const row = page.locator("table[aria-label='Hits by bot'] tbody tr").first()
    await row.waitFor()
    const bot = (await row.locator("button.link").textContent())!
    await row.getByRole("link", { name: `Catalog entry of ${bot}: its verification methods` }).click()
    await page.waitForURL((url) => url.hash === `#/catalog?bot=${encodeURIComponent(bot)}`)
    await page.locator("#catalog-count", { hasText: "Showing" }).waitFor()
    expect(await bots()).toEqual([bot])
    await page.getByRole("button", { name: "Show every agent" }).click()
    await page.waitForURL(/#\/catalog$/)
    await page.locator("#catalog-count", { hasText: `${api.agents.length} agents.` }).waitFor()
    expect(browser.pageErrors).toEqual([])
  })

  it("draws AI referrals and AI search from the API, the range in the URL; settings scan now and import; log sources with the keys page and back", async () => {
    await page.setViewportSize({ width: 1280, height: 900 })
    type Engines = { engines: Array<{ engine: string }> }
    // AI referrals: one row per engine, in the API's order, hooked by its slug.
    const attribution = await publicGet<Engines & { total_referrals: number }>("/brands/northwind-crm/attribution?range=30d")
    expect(attribution.total_referrals).toBeGreaterThan(0)
    await page.goto(`${served.base}/#/brands/northwind-crm/attribution?range=30d`)
    await page.locator("#attribution-engines-table tr[data-engine]").first().waitFor()
    expect(await page.locator("#attribution-engines-table tr[data-engine]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-engine"))))
      .toEqual(attribution.engines.map((e) => e.engine))
    expect(await page.locator("#attribution-total").textContent()).toContain(attribution.total_referrals.toLocaleString("en-US"))
    // The period applies on change and is kept in the URL.
    await page.getByLabel("Period").selectOption("7d")
    await page.waitForURL((url) => url.hash === "#/brands/northwind-crm/attribution?range=7d")
    await page.locator("#attribution-total, #attribution-summary .empty").first().waitFor()
    // AI search: the funnel's engines as the API lists them.
    const search = await publicGet<Engines>("/brands/northwind-crm/search-performance?range=30d")
    await page.goto(`${served.base}/#/brands/northwind-crm/search-performance?range=30d`)
    await page.locator("#search-engines-table tr[data-engine]").first().waitFor()
    expect(await page.locator("#search-engines-table tr[data-engine]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-engine"))))
      .toEqual(search.engines.map((e) => e.engine))
    expect(await page.locator("#search-totals [data-stage]").count()).toBe(3)

    // On a phone the brand navigation is one strip that scrolls sideways, the current tab in view.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${served.base}/#/brands/northwind-crm/settings`)
    const nav = page.getByRole("navigation", { name: "Brand pages" })
    await page.locator("#next-scan").waitFor()
    await page.waitForFunction(() => document.querySelector("nav.tabs")!.scrollLeft > 0)
    const strip = await nav.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, page: document.documentElement.scrollWidth }))
    expect(strip.scroll).toBeGreaterThan(strip.client)
    expect(strip.page).toBeLessThanOrEqual(390)
    // Every table of the kit is one card per row on a phone, each cell labelled with its column: ranking's change
    // and a mention's text are in view at 390 px, and no table scrolls sideways.
    for (const [hash, target] of [
      ["/brands/northwind-crm/ranking?range=30d", "#ranking-table tbody tr:first-child td[data-label='Change']"],
      ["/brands/northwind-crm/mentions", "#mentions-table tbody tr:first-child td[data-label='What the answer said']"]
    ] as const) {
      await page.goto(`${served.base}/#${hash}`)
      await page.locator(target).waitFor()
      const box = (await page.locator(target).boundingBox())!
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(390)
      const wraps = await page.locator(".table-wrap").evaluateAll((els) => els.map((el) => el.scrollWidth - el.clientWidth))
      expect(wraps.every((extra) => extra <= 1)).toBe(true)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(`${served.base}/#/brands/northwind-crm/settings`)
    await page.locator("#next-scan").waitFor()

    // Settings: the demo's next scan is to come; scan now says why this server cannot (no engine configured).
    expect(await page.locator("#next-scan").textContent()).not.toContain("due since")
    await page.click("#scan-now")
    await page.locator("#brand-answers .error").waitFor()
    expect(await page.locator("#brand-answers .error").textContent()).toContain("No answer engine is configured on this server")
    // An import of a file: one answer stored, one line refused with its reason.
    const prompts = await publicGet<{ prompts: Array<{ prompt: string }> }>("/brands/northwind-crm/prompts")
    const answer = { prompt: prompts.prompts[0]!.prompt, engine: "chatgpt", observed_at: new Date().toISOString(), response: "Northwind CRM is a good pick." }
    await page.setInputFiles("#import-file", {
      name: "answers.ndjson",
      mimeType: "application/x-ndjson",
      buffer: Buffer.from(`${JSON.stringify(answer)}\n${JSON.stringify({ ...answer, engine: "not-an-engine" })}\n`)
    })
    await page.click("#import-upload")
    await page.locator("#import-result").waitFor()
    expect(await page.locator("#import-result").textContent()).toBe("1 answer imported, 0 already stored, 1 refused:")
    expect(await page.locator("#import-errors li").first().textContent()).toStartWith("Line 2: ")

    // The Brands page (Growth plan): every source usable, each step links to the keys page, which offers the way back.
    await page.goto(`${served.base}/#/brands`)
    const card = page.locator("[data-brand=northwind-crm]")
    await card.locator("details.log-sources summary").click()
    const siteId = (await card.locator(".site-id").textContent())!
    expect(await card.locator("[data-source='Cloudflare Logpush'] code.paste").textContent())
      .toBe(`${served.base}/api/public/v1/agents/ingest/drain?site_id=${siteId}&format=cloudflare&header_Authorization=Bearer%20<API key>`)
    expect(await card.locator("[data-needs-plan]").count()).toBe(0)
    await card.locator("[data-source=Vercel] a.keys-link").click()
    await page.locator("#keys-return a").waitFor()
    await page.locator("#keys-return a").click()
    await page.waitForURL((url) => url.hash === "#/brands")
    expect(browser.pageErrors).toEqual([])
  }, 120_000)

  it("says when the plan's prompt cap is reached, naming the plan, and what an empty screen needs", async () => {
    // A new account on the free plan with its ten prompts in use.
    await page.evaluate(() => fetch("/api/v1/auth/logout", { method: "POST" }))
    await page.goto(`${served.base}/#/signup`)
    await page.fill("#email", "cap@example.test")
    await page.fill("#password", "a long browser password")
    await page.fill("#account_name", "Cap Inc")
    await page.click("#submit")
    await page.getByRole("heading", { name: "Brands" }).waitFor()
    expect((await sessionPost("/api/v1/me/brands", { brand_slug: "capped", brand_name: "Capped", domain: "capped.example", vertical: "saas" })).status).toBe(201)
    for (let i = 1; i <= 10; i++) expect((await sessionPost("/api/v1/me/brands/capped/prompts", { prompt: `question ${i}` })).status).toBe(201)
    await page.goto(`${served.base}/#/brands/capped/prompts`)
    await page.locator("#prompt-cap").waitFor()
    expect(await page.locator("#prompt-usage").textContent()).toBe("10 of 10 monitored prompts in use across your brands (10 on this brand).")
    expect(await page.locator("#prompt-cap").textContent()).toBe("You are using all 10 monitored prompts your Free plan allows. Upgrade your plan to monitor more questions.")
    expect(await page.getByRole("button", { name: "Add prompt" }).isDisabled()).toBe(true)
    // Screens without data yet say what is missing and what to do.
    await page.goto(`${served.base}/#/brands/capped/competitors`)
    await page.locator("#competitor-list .empty").waitFor()
    expect(await page.locator("#competitor-list .empty").textContent()).toContain("No competitors yet")
  })

  it("free plan: the usable source first, one wall per plan saying who changes it; slug from the name; back to the page asked for after sign-in", async () => {
    // Signed in as the free account of the test above.
    await page.goto(`${served.base}/#/brands`)
    const card = page.locator("[data-brand=capped]")
    await card.locator("details.log-sources summary").click()
    expect(await card.locator(".drain-url").count()).toBe(0)
    expect(await card.locator("details.log-sources [data-source]").first().getAttribute("data-source")).toBe("Tracking tag")
    const drains = (await card.locator("[data-needs=drain]").textContent())!
    for (const text of ["Vercel", "Netlify", "Growth plan", "Free plan", "operator", "bun run cli plan set cap@example.test growth"]) expect(drains).toContain(text)
    expect(await card.locator("[data-needs=batch]").textContent()).toContain("bun run cli plan set cap@example.test starter")
    expect(await card.locator("[data-needs-plan]").count()).toBe(2)
    // Settings: no scan-now button, the wall instead; the import is there on every plan.
    await page.goto(`${served.base}/#/brands/capped/settings`)
    await page.locator("#scan-plan").waitFor()
    expect(await page.locator("#scan-now").count()).toBe(0)
    expect(await page.locator("#scan-plan").textContent()).toContain("bun run cli plan set cap@example.test starter")
    expect(await page.locator("#import-upload").count()).toBe(1)

    // Adding a brand: the slug follows the name until edited by hand.
    await page.goto(`${served.base}/#/brands?add=1`)
    await page.locator("#brand-name").fill("Café Müller & Söhne")
    expect(await page.locator("#brand-slug").inputValue()).toBe("cafe-muller-and-sohne")
    await page.locator("#brand-name").fill("東京カフェ")
    expect(await page.locator("#brand-slug").inputValue()).toBe("")
    expect(await page.locator("#brand-slug-hint").textContent()).toContain("no Latin letters or digits")
    await page.locator("#brand-slug").fill("tokyo-cafe")
    await page.locator("#brand-name").fill("東京カフェ 2")
    expect(await page.locator("#brand-slug").inputValue()).toBe("tokyo-cafe")

    // Signed out, a brand page asks to sign in, then opens that page (through sign-up's link too).
    await page.evaluate(() => fetch("/api/v1/auth/logout", { method: "POST" }))
    // A link opened afresh (a new load of the application), as from an email or a bookmark.
    await page.goto(`${served.base}/#/brands/capped/attribution?range=7d`)
    await page.reload()
    await page.locator("#email").waitFor()
    expect(await page.getByRole("link", { name: "Create an account" }).getAttribute("href"))
      .toBe(`#/signup?next=${encodeURIComponent("#/brands/capped/attribution?range=7d")}`)
    await page.fill("#email", "cap@example.test")
    await page.fill("#password", "a long browser password")
    await page.click("#submit")
    await page.waitForURL((url) => url.hash === "#/brands/capped/attribution?range=7d")
    await page.locator("#attribution-summary .empty").waitFor()
    expect(await page.locator("#attribution-summary .empty").textContent()).toContain("connect a log source")
    // A next= that leaves the application is ignored: the Brands page.
    await page.evaluate(() => fetch("/api/v1/auth/logout", { method: "POST" }))
    await page.goto(`${served.base}/#/signin?next=${encodeURIComponent("https://evil.example/")}`)
    await page.reload()
    await page.fill("#email", "cap@example.test")
    await page.fill("#password", "a long browser password")
    await page.click("#submit")
    await page.getByRole("heading", { name: "Brands" }).waitFor()
    expect(new URL(page.url()).origin).toBe(served.base)
    expect(browser.pageErrors).toEqual([])
  }, 120_000)
})
