import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../hardening/server.js"
import { type Browser, chromium, type Page } from "playwright-core"
import { CHROMIUM, CHROMIUM_ARGS, haveChromium, ROOT, waitForDemo } from "./chromium.js"
import { sampleAgents, sampleIndustryMetrics, sampleIndustryRanking, sampleModel, samplePages, sampleSnapshots } from "./sample-data.js"
import { axeSource, type Finding, inspect, PAGES, settle, WIDTHS } from "./walk.js"

/**
 * The web application in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core) against the real server (`bun run start` on a port, fresh embedded
 * database). Screenshots go to test-artifacts/; with UPDATE_SCREENSHOTS=1 every page of walk.ts is
 * shot at both widths into docs/screenshots/ (the README's pictures)
 * (`UPDATE_SCREENSHOTS=1 bun test test/web/browser.test.ts`). In CI (CI=true) a missing Chromium
 * fails the test.
 */

const ARTIFACTS = join(ROOT, "test-artifacts")

describe.skipIf(!haveChromium)("web application in headless Chromium", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-browser-"))
  const profileDir = mkdtempSync(join(tmpdir(), "aiv-chromium-"))
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  let server: ReturnType<typeof Bun.spawn>
  let browser: Browser
  let page: Page
  const cspViolations: Array<string> = []

  const screenshot = async (name: string, readme = false) => {
    mkdirSync(ARTIFACTS, { recursive: true })
    const file = join(ARTIFACTS, `${name}.png`)
    await page.screenshot({ path: file, fullPage: true })
    if (readme && process.env.UPDATE_SCREENSHOTS) {
      mkdirSync(join(ROOT, "docs", "screenshots"), { recursive: true })
      copyFileSync(file, join(ROOT, "docs", "screenshots", `${name}.png`))
    }
  }

  beforeAll(async () => {
    server = Bun.spawn(["bun", "run", "start"], {
      cwd: ROOT,
      // The demo workspace (30 days: enough for the 30d dashboards), filled in the background.
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, DATABASE_URL: "", DEMO: "1", DEMO_DAYS: "30",
        // The webhook test's receiver listens on loopback.
        WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_POLL_MS: "200" },
      stdout: "ignore",
      stderr: "ignore"
    })
    let up = false
    // A loaded machine builds the 30-day demo slowly: minutes, not seconds.
    for (let i = 0; i < 4800 && !up; i++) {
      up = await fetch(`${base}/healthz`).then((r) => r.ok, () => false)
      if (!up) await Bun.sleep(100)
    }
    if (!up) throw new Error("server did not come up")
    // The server listens in seconds and fills the demo's days in the background: the pages are walked once it is done.
    await waitForDemo(base)
    // A fresh profile per run (persistent context = its own --user-data-dir).
    const context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 }
    })
    browser = context.browser() as Browser
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base })
    page = context.pages()[0] ?? await context.newPage()
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text())
    })
    page.on("pageerror", (error) => cspViolations.push(`page error: ${error.message}`))
    ;(globalThis as any).__aivContext = context
  }, 540_000)

  afterAll(async () => {
    await (globalThis as any).__aivContext?.close()
    await browser?.close().catch(() => undefined)
    server?.kill("SIGTERM")
    await server?.exited
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(profileDir, { recursive: true, force: true })
  })

  it("signs up, manages a key, uses and revokes it, and opens the dashboards", async () => {
    // Sign up.
    await page.goto(`${base}/`)
    await page.getByRole("link", { name: "Create an account" }).click()
    await page.fill("#email", "browser@example.test")
    await page.fill("#password", "a long browser password")
    await page.fill("#account_name", "Browser Inc")
    await page.click("#submit")
    await page.getByRole("heading", { name: "Brands" }).waitFor()

    // A brand: its site_id and drain URL with the site_id filled in.
    await page.fill("#brand-slug", "acme")
    await page.fill("#brand-name", "Acme")
    await page.fill("#brand-domain", "https://www.acme.com/")
    await page.click("#create-brand")
    const card = page.locator("[data-brand=acme]")
    await card.waitFor()
    const siteId = (await card.locator(".site-id").textContent())!
    expect(siteId).toMatch(/^[0-9a-f-]{36}$/)
    // A free plan gets no drain URL it could not use: the log sources say which plan each needs.
    expect(await card.locator(".drain-url").count()).toBe(0)
    // The getting-started checklist: the brand is step 1 of 5, the next step says what it unlocks.
    await page.locator("#onboarding-count").waitFor()
    expect(await page.locator("#onboarding-count").textContent()).toBe("1 of 5 steps done for Acme.")
    expect(await page.locator("#onboarding li[aria-current=step]").textContent()).toContain("Unlocks: share of voice")
    const sources = card.locator("details.log-sources")
    await sources.locator("summary").click()
    // The source the free plan can use leads; the others are one short list per plan, saying who changes a plan.
    expect(await sources.locator("[data-source]").first().getAttribute("data-source")).toBe("Tracking tag")
    expect(await sources.locator("[data-needs=drain] [data-needs-plan=growth]").textContent()).toContain("this account is on the Free plan")
    expect(await sources.locator("[data-needs=batch] [data-needs-plan=starter]").textContent()).toContain("CloudFront")
    await screenshot("brands")

    // Settings > Security > API keys: create, shown once, copy.
    await page.getByRole("link", { name: "Settings", exact: true }).click()
    await page.getByRole("heading", { name: "API keys" }).waitFor()
    await page.fill("#key-name", "CI laptop")
    await page.click("#create-key")
    const shown = (await page.locator("#new-key").textContent())!
    expect(shown).toMatch(/^aivkey_/)
    expect(await page.locator("#new-key-panel").textContent()).toContain("shown this once")
    await page.locator("#new-key-panel").getByRole("button", { name: "Copy" }).click()
    const copied = await page.evaluate(() => navigator.clipboard.readText())
    expect(copied).toBe(shown)
    await screenshot("keys-created")
    // Nothing of the key is kept by the page: no web storage, no cookie readable by script.
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0)
    expect(await page.evaluate(() => document.cookie)).toBe("")

    // Use it with fetch against the public API.
    const use = async (key: string) =>
      page.evaluate(async (token) => {
        const response = await fetch("/api/public/v1/brands", { headers: { authorization: `Bearer ${token}` } })
        return { status: response.status, body: await response.text() }
      }, key)
    const used = await use(copied)
    expect(used.status).toBe(200)
    expect((JSON.parse(used.body) as { brands: Array<{ site_id: string }> }).brands[0]!.site_id).toBe(siteId)

    // The list shows it with its last use; the free plan's cap answers 402 with its hint.
    await page.locator("#new-key-panel").getByRole("button", { name: "Done" }).click()
    expect(await page.locator("#new-key").count()).toBe(0)
    await page.reload()
    const row = page.locator("#keys-table tbody tr").first()
    await row.waitFor()
    expect(await row.textContent()).toContain(shown.slice(0, 14))
    expect(await row.locator("td").nth(3).textContent()).not.toBe("never")
    await page.fill("#key-name", "one too many")
    await page.click("#create-key")
    const capMessage = page.getByRole("alert")
    await capMessage.waitFor()
    expect(await capMessage.textContent()).toContain("Plan limit reached: the free plan allows 1")
    expect(await capMessage.textContent()).toContain("Revoke a key you no longer use, or upgrade your plan.")

    // Revoke, with confirmation; the next request with the key gets the 401.
    await row.getByRole("button", { name: "Revoke" }).click()
    await page.locator("#revoke-dialog").getByText("This cannot be undone").waitFor()
    await page.click("#confirm-revoke")
    await page.locator("#keys-table .badge.revoked").waitFor()
    const refused = await use(copied)
    expect(refused).toEqual({ status: 401, body: `{"error":"invalid API key"}` })

    // A second key for the screenshot: one active, one revoked.
    await page.fill("#key-name", "production server")
    await page.click("#create-key")
    await page.locator("#new-key").waitFor()
    await page.locator("#new-key-panel").getByRole("button", { name: "Done" }).click()
    await page.locator("#keys-table tbody tr").nth(1).waitFor()
    await screenshot("keys")

    // The agent dashboard of the brand: data once agent analytics land, a clear notice until then.
    await page.goto(`${base}/#/brands/acme/agents?range=30d`)
    await page.locator("#agent-kpis, #agents-page .notice").first().waitFor()
    await page.locator("#pages-table, #agent-pages .notice").first().waitFor()
    // A brand with no traffic yet: zero KPIs and the next step in words, not empty axes.
    if ((await page.locator("#agents-page .empty").count()) > 0) {
      expect(await page.locator("#agents-page .empty").textContent()).toContain("Connect a log source")
      expect(await page.locator("#agents-page canvas").count()).toBe(0)
    } else if ((await page.locator("#agent-kpis").count()) > 0) {
      await page.locator("#agents-page canvas").first().waitFor()
      await page.locator("#pages-table [data-sort=errors]").click()
      await page.waitForURL(/sort=errors/)
      await page.locator("#pages-table th[aria-sort]").waitFor()
    } else {
      expect(await page.locator("#agents-page .notice").first().textContent()).toContain("501")
    }
    await screenshot("agents")

    await page.goto(`${base}/#/brands/acme/visibility`)
    for (const id of ["snapshots", "share-of-voice", "engines"]) {
      await page.locator(`#${id} canvas, #${id} .notice, #${id} .empty`).first().waitFor()
    }
    await screenshot("visibility")

    // Nothing to act on yet: the actions view says what it looked at.
    await page.goto(`${base}/#/brands/acme/actions`)
    const empty = page.locator("#actions-screen .empty")
    await empty.waitFor()
    expect(await empty.textContent()).toMatch(/no rule matched in the last 30 days: \d+ AI crawler hits from \d+ bots, 0 AI answers to 0 prompts/)

    // Sign out: back to the sign-in page, and the session is gone server-side.
    await page.click("#signout")
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    const me = await page.evaluate(async () => (await fetch("/api/v1/me")).status)
    expect(me).toBe(401)

    // Sign in again with the same credentials.
    await page.fill("#email", "browser@example.test")
    await page.fill("#password", "a long browser password")
    await page.click("#submit")
    await page.getByRole("heading", { name: "Brands" }).waitFor()

    // Settings > Security: a password change needs the current password; then sign out everywhere.
    await page.goto(`${base}/#/settings/security/api-keys`)
    await page.fill("#current-password", "not the password at all")
    await page.fill("#new-password", "a newer browser password")
    await page.click("#change-password")
    await page.getByText("Current password is not right").waitFor()
    await page.fill("#current-password", "a long browser password")
    await page.fill("#new-password", "a newer browser password")
    await page.click("#change-password")
    await page.getByText("Password changed.").waitFor()
    // This session was renewed, not ended.
    expect(await page.evaluate(async () => (await fetch("/api/v1/me")).status)).toBe(200)
    await page.click("#sign-out-everywhere")
    await page.click("#confirm-sign-out-everywhere")
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    expect(await page.evaluate(async () => (await fetch("/api/v1/me")).status)).toBe(401)
    await page.fill("#email", "browser@example.test")
    await page.fill("#password", "a newer browser password")
    await page.click("#submit")
    await page.getByRole("heading", { name: "Brands" }).waitFor()

    expect(cspViolations).toEqual([])
  }, 120_000)

  it("draws the dashboards from answers of their response schemas (sort, filters, paging)", async () => {
    // Until the analytics issues land, the twins answer 501: the drawing is checked on sample
    // answers validated by the endpoints' own Schemas, served in place of the twins.
    const requested: Array<string> = []
    const json = (body: unknown) => ({ status: 200, contentType: "application/json", body: JSON.stringify(body) })
    // The twins of acme's reads, and the share of voice (GET /industry/ranking, brand acme).
    const sampled = /\/api\/v1\/me\/(brands\/acme\/(agents|snapshots|industry-metrics|model)|industry\/ranking\?.*brand=acme)/
    await page.route(sampled, (route) => {
      const url = new URL(route.request().url())
      requested.push(url.pathname + url.search)
      if (url.pathname.endsWith("/industry/ranking")) return route.fulfill(json(sampleIndustryRanking))
      if (url.pathname.endsWith("/agents/pages")) {
        return route.fulfill(json(samplePages(Number(url.searchParams.get("offset")), Number(url.searchParams.get("limit")))))
      }
      if (url.pathname.endsWith("/agents")) return route.fulfill(json(sampleAgents))
      if (url.pathname.endsWith("/snapshots")) return route.fulfill(json(sampleSnapshots))
      if (url.pathname.endsWith("/industry-metrics")) return route.fulfill(json(sampleIndustryMetrics))
      return route.fulfill(json(sampleModel))
    })
    await page.goto(`${base}/#/brands/acme/agents?range=30d`)
    await page.locator("#agent-kpis").waitFor()
    expect(await page.locator("#agent-kpis").textContent()).toContain("5,378")
    expect(await page.locator("#agents-page canvas").count()).toBe(3)
    expect(await page.locator("#pages-table tbody tr").count()).toBe(6)
    await screenshot("agents-sample")

    // Sort by a column header, filter by kind, page through.
    await page.locator("#pages-table [data-sort=errors]").click()
    await page.waitForURL(/sort=errors&dir=desc/)
    await page.locator("#pages-table th[aria-sort=descending]").waitFor()
    // Every filter applies on change, no Apply button (a text field when Enter is pressed or it is left).
    expect(await page.locator("#agents-page form button[type=submit]").count()).toBe(0)
    // Each step waits for the answer it asks for: the table of the step before is already drawn, so
    // waiting for it says nothing about whether the new request has gone out.
    const answered = (test: (url: string) => boolean) =>
      page.waitForResponse((response) => {
        const url = new URL(response.url())
        return test(url.pathname + url.search)
      })
    const kpisFiltered = answered((url) => url.startsWith("/api/v1/me/brands/acme/agents?") && url.includes("kind=search_crawler"))
    await page.selectOption("select[name=kind]", "search_crawler")
    await page.waitForURL(/kind=search_crawler/)
    await kpisFiltered
    await page.locator("#pages-range").waitFor()
    const pagesOf25 = answered((url) => url.includes("/agents/pages?") && url.includes("limit=25"))
    await page.selectOption("select[name=limit]", "25")
    await page.waitForURL(/limit=25/)
    await pagesOf25
    await page.locator("#pages-range").waitFor()
    const pagesFiltered = answered((url) =>
      url.includes("/agents/pages?") && url.includes("kind=search_crawler") && url.includes("status=ok") && url.includes("sort=errors") &&
      url.includes("limit=25")
    )
    await page.fill("input[name=status]", "ok")
    await page.press("input[name=status]", "Enter")
    await page.waitForURL(/status=ok/)
    await pagesFiltered
    await page.locator("#pages-range").waitFor()
    expect(requested.some((url) => url.startsWith("/api/v1/me/brands/acme/agents?") && url.includes("kind=search_crawler"))).toBe(true)
    expect(requested.some((url) => url.includes("/agents/pages?") && url.includes("kind=search_crawler") && url.includes("status=ok") && url.includes("sort=errors") && url.includes("limit=25"))).toBe(true)

    await page.goto(`${base}/#/brands/acme/visibility?range=30d`)
    for (const id of ["snapshots", "share-of-voice", "engines"]) await page.locator(`#${id} canvas`).waitFor()
    expect(await page.locator("#share-of-voice").textContent()).toContain("Globex")
    // Intervals: their two ends in the tables (never "±": they are lopsided near 0 and 100), what they mean
    // said in words, a change within noise marked n.s., a change from nothing shown as new.
    expect(await page.locator("#share-of-voice").textContent()).toContain("41.0% (38.0–44.0%)")
    const engines = await page.locator("#engines").textContent()
    expect(engines).toContain("44.2 (39.1–49.4)")
    expect(await page.locator("#visibility-page").textContent()).not.toContain("±")
    expect(await page.locator("#interval-meaning").textContent()).toContain("from one asking to the next on your monitored prompts and engines")
    expect(engines).toContain("-1.2 pt (n.s.)")
    expect(engines).toContain("+3.1 pt")
    expect(engines).toContain("new")
    await screenshot("visibility-sample")
    await page.unroute(sampled)
    expect(cspViolations).toEqual([])
  }, 60_000)

  it("opens the agent dashboard and the visibility page of a demo brand, with data", async () => {
    await page.goto(`${base}/`)
    // The app renders after asking /api/v1/me: wait for either state before choosing.
    await page.locator("#signout, #email").first().waitFor()
    if ((await page.locator("#signout").count()) > 0) {
      await page.click("#signout")
      await page.getByRole("heading", { name: "Sign in" }).waitFor()
    }
    await page.fill("#email", "demo@example.com")
    await page.fill("#password", "demo-password-2026")
    await page.click("#submit")
    await page.getByRole("heading", { name: "Brands" }).waitFor()

    await page.goto(`${base}/#/brands/northwind-crm/agents?range=30d`)
    await page.locator("#agent-kpis").waitFor()
    await page.locator("#agents-page canvas").first().waitFor()
    await page.locator("#pages-table tbody tr").first().waitFor()
    // Real crawler traffic: the KPIs count hits, and the pages table lists crawled URLs.
    expect(await page.locator("#agent-kpis").textContent()).toMatch(/[1-9]/)
    expect(await page.locator("#pages-table tbody tr").count()).toBeGreaterThan(0)
    await page.waitForTimeout(500) // charts finish their first animation frame
    await screenshot("agents-demo")

    await page.goto(`${base}/#/brands/northwind-crm/visibility?range=30d`)
    for (const id of ["snapshots", "share-of-voice", "engines"]) await page.locator(`#${id} canvas`).waitFor()
    await page.waitForTimeout(500)
    await screenshot("visibility-demo")
    expect(cspViolations).toEqual([])
  }, 60_000)

  it("leads each brand's pages with what to fix first: sentences with numbers, links to the evidence, one click from every page", async () => {
    // Signed in as the demo user (the test above).
    const slug = "northwind-crm"
    const apiKey = await page.evaluate(async () => {
      const response = await fetch("/api/v1/me/brands/northwind-crm/actions?range=30d")
      return (await response.json()) as { actions: Array<{ kind: string; title: string; evidence: Record<string, unknown>; link: string }> }
    })
    expect(new Set(apiKey.actions.map((a) => a.kind)).size).toBe(5)
    await page.goto(`${base}/#/brands/${slug}/actions?range=30d`)
    await page.locator("#actions li").first().waitFor()
    const items = page.locator("#actions li")
    expect(await items.count()).toBe(apiKey.actions.length)
    // Each action is drawn in the API's order: its sentence carries its numbers, its link the evidence route.
    for (const [i, action] of apiKey.actions.entries()) {
      const item = items.nth(i)
      expect(await item.locator("h3").textContent()).toBe(action.title)
      expect(await item.textContent()).toMatch(/\d/)
      expect(await item.locator("a").getAttribute("href")).toBe(action.link)
    }
    // The spoofed-crawler action opens the agent dashboard filtered to its evidence.
    const spoofed = apiKey.actions.findIndex((a) => a.kind === "block_spoofed")
    await items.nth(spoofed).locator("a").click()
    await page.waitForURL((url) => url.hash.startsWith(`#/brands/${slug}/agents?`) && url.hash.includes("verification=spoofed"))
    await page.locator("#agent-kpis").waitFor()
    await screenshot("actions-demo")
    // One click from every page of the brand: the brand navigation leads with it.
    for (const screen of ["agents", "search-performance", "attribution", "visibility", "mentions", "ranking", "competitors", "prompts", "topics", "citations", "fanouts", "settings"]) {
      await page.goto(`${base}/#/brands/${slug}/${screen}`)
      const nav = page.getByRole("navigation", { name: "Brand pages" })
      await nav.waitFor()
      const first = nav.getByRole("link").nth(1)
      expect([screen, await first.textContent(), await first.getAttribute("href")]).toEqual([screen, "Actions", `#/brands/${slug}/actions`])
    }
    await page.goto(`${base}/#/brands`)
    await page.locator(`[data-brand=${slug}] a[href="#/brands/${slug}/actions"]`).waitFor()
    // A brand with nothing to act on says what was looked at.
    await page.goto(`${base}/#/brands/bramble-outfitters/actions?range=7d`)
    await page.locator("#actions li, #actions-screen .empty").first().waitFor()
    expect(cspViolations).toEqual([])
  }, 90_000)

  it("filters the agent dashboard by choices built from the brand's data, and by a click on a breakdown row", async () => {
    await page.goto(`${base}/#/brands/northwind-crm/agents?range=30d`)
    await page.locator("#pages-table tbody tr").first().waitFor()
    // The title names the brand, not its slug; kinds read as words.
    await page.getByRole("heading", { name: "AI crawlers and agents · Northwind CRM" }).waitFor()
    expect(await page.locator("main").textContent()).not.toContain("training_crawler")
    // The vendor choices are the vendors seen (spelled as the API matches them), not free text.
    await page.locator("select[name=vendor] option[value=OpenAI]").waitFor({ state: "attached" })
    const vendors = await page.locator("select[name=vendor] option").evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))
    expect(vendors[0]).toBe("")
    expect(vendors).toContain("OpenAI")
    const bots = await page.locator("select[name=bot] option").evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))
    expect(bots).toContain("GPTBot")
    await page.selectOption("select[name=vendor]", "OpenAI")
    await page.waitForURL(/vendor=OpenAI/)
    await page.locator("#agent-kpis").waitFor()
    expect(await page.locator("#agent-kpis .value").first().textContent()).not.toBe("0")
    expect(await page.locator("#active-filters").textContent()).toContain("Vendor: OpenAI")
    // A row of the bot breakdown filters by its bot; the filter's chip removes it again.
    const row = page.locator("table[aria-label='Hits by bot'] tbody tr").first()
    // The bot's name is its row's button (its cell also links to the bot's catalog entry).
    const bot = (await row.locator("button.link").textContent())!
    await row.locator("button.link").click()
    await page.waitForURL(new RegExp(`bot=${encodeURIComponent(bot)}`))
    await page.locator("#active-filters").getByText(`Bot: ${bot}`).waitFor()
    expect(new URL(page.url()).hash).toContain("vendor=OpenAI")
    await page.getByRole("button", { name: "Remove the bot filter" }).click()
    await page.waitForURL((url) => !url.hash.includes("bot="))
    expect(cspViolations).toEqual([])
  }, 60_000)

  it("opens a crawled page from the list: each bot that fetched it, with its verification verdicts", async () => {
    // Signed in as the demo user. The page's link in the list, by keyboard.
    await page.goto(`${base}/#/brands/northwind-crm/agents?range=30d`)
    const row = page.locator(`#pages-table tbody tr[data-path="/pricing"]`)
    await row.waitFor()
    await row.locator("a").first().focus()
    await page.keyboard.press("Enter")
    await page.waitForURL((url) => url.hash.includes("path=%2Fpricing"))
    await page.locator("#page-bots-table tbody tr").first().waitFor()
    expect(await page.locator("#page-bots-title").textContent()).toBe("Bots that fetched /pricing")
    // Each bot's row and its verdict cell say what the API says, bot by bot.
    const api = await page.evaluate(async () =>
      (await (await fetch("/api/v1/me/brands/northwind-crm/agents/pages/bots?range=30d&path=%2Fpricing")).json()) as {
        bots: Array<{ bot: string; verified: number; spoofed: number; unverified: number }>
      })
    const drawn = await page.locator("#page-bots-table tbody tr").evaluateAll((rows) =>
      rows.map((r) => ({ bot: r.getAttribute("data-bot"), verdict: r.querySelector("[data-verdict]")?.getAttribute("data-verdict") })))
    expect(drawn).toEqual(api.bots.map((b) => ({ bot: b.bot, verdict: `verified=${b.verified} spoofed=${b.spoofed} unverified=${b.unverified}` })))
    // The demo shows the verification: several bots, verified hits, and spoofed ones.
    expect(api.bots.length).toBeGreaterThanOrEqual(5)
    expect(api.bots.some((b) => b.verified > 0)).toBe(true)
    expect(api.bots.some((b) => b.spoofed > 0)).toBe(true)
    expect(await page.locator(`#page-bots-table tr[data-bot="GPTBot"] [data-verdict]`).textContent()).toContain("Spoofed")
    await screenshot("agents-page-bots")
    // A filter applies to the page's bots too, and the way back keeps it.
    await page.selectOption("select[name=vendor]", "OpenAI")
    await page.waitForURL((url) => url.hash.includes("vendor=OpenAI") && url.hash.includes("path=%2Fpricing"))
    await page.locator("#page-bots-table tbody tr").first().waitFor()
    for (const bot of await page.locator("#page-bots-table tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-bot")))) {
      expect(["GPTBot", "OAI-SearchBot", "ChatGPT-User", "ChatGPT Agent", "OpenAI MCP connector"]).toContain(bot!)
    }
    await page.getByRole("link", { name: "← All crawled pages" }).click()
    await page.waitForURL((url) => !url.hash.includes("path=") && url.hash.includes("vendor=OpenAI"))
    await page.locator("#pages-table tbody tr").first().waitFor()
    expect(cspViolations).toEqual([])
  }, 60_000)

  it("every page, at 1280 px and at 390 px: no sideways scroll, no serious or critical axe-core violation", async () => {
    const axe = axeSource()
    const problems: Array<{ page: string; width: number; overflow?: Finding["overflow"]; violations?: Finding["violations"] }> = []
    const signIn = async () => {
      await page.goto(`${base}/#/signin`)
      await page.fill("#email", "demo@example.com")
      await page.fill("#password", "demo-password-2026")
      await page.click("#submit")
      await page.getByRole("heading", { name: "Brands" }).waitFor()
    }
    for (const { width, height } of WIDTHS) {
      await page.setViewportSize({ width, height })
      for (const signedOut of [true, false]) {
        if (signedOut) {
          await page.goto(`${base}/`)
          await page.locator("#signout, #email").first().waitFor()
          if ((await page.locator("#signout").count()) > 0) await page.click("#signout")
          await page.locator("#email").waitFor()
        } else {
          await signIn()
        }
        for (const walked of PAGES.filter((p) => (p.signedOut ?? false) === signedOut)) {
          await page.goto(`${base}/${walked.route}`)
          await settle(page, walked.ready)
          const finding = await inspect(page, axe)
          if (finding.overflow.scrollWidth > finding.overflow.viewport) problems.push({ page: walked.name, width, overflow: finding.overflow })
          if (finding.violations.length > 0) problems.push({ page: walked.name, width, violations: finding.violations })
          if (process.env.UPDATE_SCREENSHOTS) {
            mkdirSync(join(ROOT, "docs", "screenshots"), { recursive: true })
            await page.screenshot({ path: join(ROOT, "docs", "screenshots", `${walked.name}-${width}.png`), fullPage: true })
          }
        }
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    expect(problems).toEqual([])
    expect(cspViolations).toEqual([])
  }, 600_000)

  it("manages a webhook: create (secret shown once), test, deliveries; the brand card shows ingestion health", async () => {
    const received: Array<string> = []
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (request) => {
        received.push(await request.text())
        return new Response("ok")
      }
    })
    try {
      await page.goto(`${base}/#/settings/webhooks`)
      await page.getByRole("heading", { name: "Webhooks" }).waitFor()
      await page.fill("#webhook-url", `http://127.0.0.1:${receiver.port}/hook`)
      await page.fill("#webhook-description", "alerts to the ops channel")
      await page.click("#create-webhook")
      expect(await page.locator("#webhook-secret").textContent()).toMatch(/^whsec_/)
      const card = page.locator("[data-webhook]").first()
      await card.getByRole("button", { name: "Send test" }).click()
      for (let i = 0; i < 100 && received.length === 0; i++) await Bun.sleep(100)
      expect(JSON.parse(received[0]!).type).toBe("ping")
      await card.getByRole("button", { name: "Deliveries" }).click()
      await card.locator("table.deliveries .badge.active").waitFor()
      await page.locator("#event-log, main p.muted").first().waitFor()
      await screenshot("webhooks")

      await page.goto(`${base}/#/brands`)
      await page.locator("[data-brand] >> text=Ingestion health").first().waitFor()
      expect(cspViolations).toEqual([])
    } finally {
      receiver.stop(true)
    }
  }, 60_000)

  it("answers a marketer's four questions on the demo, at 1280 px and at 390 px, each answer on screen", async () => {
    await page.goto(`${base}/#/signin`)
    await page.locator("#signout, #email").first().waitFor()
    if ((await page.locator("#email").count()) > 0) {
      await page.fill("#email", "demo@example.com")
      await page.fill("#password", "demo-password-2026")
      await page.click("#submit")
      await page.getByRole("heading", { name: "Brands" }).waitFor()
    }
    const api = <T,>(path: string) => page.evaluate(async (p) => (await (await fetch(p)).json()) as T, path)
    // On screen: drawn, and inside the viewport's width without scrolling sideways (no decisive column off-screen).
    const onScreen = async (locator: ReturnType<Page["locator"]>, width: number) => {
      await locator.scrollIntoViewIfNeeded()
      expect(await locator.isVisible()).toBe(true)
      const box = (await locator.boundingBox())!
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(width + 0.5)
      return (await locator.textContent())!
    }
    const brands = (await api<{ brands: Array<{ brand_slug: string }> }>("/api/v1/me/brands")).brands
    const [first, second] = [brands[0]!.brand_slug, brands[1]!.brand_slug]
    for (const { width, height } of WIDTHS) {
      await page.setViewportSize({ width, height })

      // 1. The top competitor's ChatGPT share this week, with its 95% interval and whether its change is real.
      const ranking = await api<{ ranking: Array<{ name: string; is_own: boolean; share: number }> }>(
        `/api/v1/me/industry/ranking?range=7d&brand=${first}&engine=chatgpt`
      )
      const competitor = ranking.ranking.find((row) => !row.is_own)!
      await page.goto(`${base}/#/brands/${first}/visibility?range=7d&engine=chatgpt`)
      const row = page.locator(`#share-table tr[data-brand="${competitor.name}"]`)
      await row.waitFor()
      expect(await page.locator("#share-scope").textContent()).toContain("ChatGPT")
      const share = await onScreen(row.locator("[data-share]"), width)
      expect(share).toMatch(/^\d+(\.\d)?% \(\d+(\.\d)?–\d+(\.\d)?%\)$/)
      expect(share.startsWith(`${(competitor.share * 100).toFixed(1)}%`)).toBe(true)
      await screenshot(`question-share-${width}`)

      // 2. The AI crawlers that read /pricing, and whether they are who they say.
      await page.goto(`${base}/#/brands/${first}/agents?range=7d&path=%2Fpricing`)
      const bots = page.locator("#page-bots-table tbody tr[data-bot]")
      await bots.first().waitFor()
      expect(await bots.count()).toBeGreaterThanOrEqual(3)
      const verdicts = await onScreen(bots.first().locator("[data-verdict]"), width)
      expect(verdicts).toMatch(/Verified|Unverified|Spoofed/)
      await screenshot(`question-bots-${width}`)

      // 3. The domains engines cite for one topic of the second brand, but never beside it.
      const topics = [...new Set((await api<{ prompts: Array<{ topic: string }> }>(`/api/v1/me/brands/${second}/prompts`)).prompts.map((p) => p.topic))]
      let topic = ""
      let domains: Array<string> = []
      for (const candidate of topics) {
        const gap = await api<{ domains: Array<{ domain: string }> }>(`/api/v1/me/industry/gap?range=30d&brand=${second}&topic=${encodeURIComponent(candidate)}`)
        if (gap.domains.length > 0) {
          topic = candidate
          domains = gap.domains.map((d) => d.domain)
          break
        }
      }
      expect(topic).not.toBe("")
      await page.goto(`${base}/#/brands/${second}/citations?range=30d&topic=${encodeURIComponent(topic)}`)
      const gapRows = page.locator("#gap-table tr[data-gap-domain]")
      await gapRows.first().waitFor()
      expect(await gapRows.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-gap-domain")))).toEqual(domains.slice(0, Math.max(1, await gapRows.count())))
      expect(await onScreen(gapRows.first().locator("td").first(), width)).toContain(domains[0]!)
      await screenshot(`question-gap-${width}`)

      // 4. What to fix first.
      await page.goto(`${base}/#/brands/${first}/actions?range=30d`)
      const action = page.locator("#actions li").first()
      await action.waitFor()
      expect(await onScreen(action.locator("h3"), width)).not.toBe("")
      await screenshot(`question-actions-${width}`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    expect(cspViolations).toEqual([])
  }, 180_000)

  it("serves the API reference offline", async () => {
    await page.goto(`${base}/api/public/v1/docs`)
    await page.getByRole("heading", { name: "Endpoints" }).waitFor()
    expect(await page.locator("section.op").count()).toBe(23)
    await screenshot("api-reference")
  })
})
