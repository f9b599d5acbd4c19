import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../hardening/server.js"
import { type Browser, chromium, type Page } from "playwright-core"
import { sampleAgents, sampleIndustryMetrics, sampleModel, samplePages, sampleSnapshots } from "./sample-data.js"

/**
 * The web application in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core) against the real server (`bun run start` on a port, fresh embedded
 * database). Screenshots go to test-artifacts/; with UPDATE_SCREENSHOTS=1 the README's copies
 * in docs/screenshots/ are refreshed too. In CI (CI=true) a missing Chromium fails the test.
 */

const CHROMIUM = "/usr/bin/chromium"
const ROOT = join(import.meta.dir, "..", "..")
const ARTIFACTS = join(ROOT, "test-artifacts")
const haveChromium = existsSync(CHROMIUM)
if (!haveChromium && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs chromium`)

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
      // The demo workspace (30 days: enough for the 30d dashboards) is created before the server listens.
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, DATABASE_URL: "", DEMO: "1", DEMO_DAYS: "30",
        // The webhook test's receiver listens on loopback.
        WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_POLL_MS: "200" },
      stdout: "ignore",
      stderr: "ignore"
    })
    let up = false
    for (let i = 0; i < 1800 && !up; i++) {
      up = await fetch(`${base}/healthz`).then((r) => r.ok, () => false)
      if (!up) await Bun.sleep(100)
    }
    if (!up) throw new Error("server did not come up")
    // A fresh profile per run (persistent context = its own --user-data-dir).
    const context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ],
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
  }, 240_000)

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
    expect(await card.locator(".drain-url").textContent()).toBe(`${base}/api/public/v1/agents/ingest/drain?site_id=${siteId}`)
    // Each log source's set-up, with this brand's URL and site_id filled in.
    const sources = card.locator("details.log-sources")
    await sources.locator("summary").click()
    expect(await sources.locator("[data-source='Cloudflare Logpush'] code").textContent())
      .toBe(`${base}/api/public/v1/agents/ingest/drain?site_id=${siteId}&format=cloudflare&header_Authorization=Bearer%20<API key>`)
    expect(await sources.locator("[data-source=CloudFront] code").textContent()).toContain(`--site ${siteId} --key <API key> --url ${base}`)
    await screenshot("brands")

    // Settings > Security > API keys: create, shown once, copy.
    await page.getByRole("link", { name: "Settings" }).click()
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
    await screenshot("keys", true)

    // The agent dashboard of the brand: data once agent analytics land, a clear notice until then.
    await page.goto(`${base}/#/brands/acme/agents?range=30d`)
    await page.locator("#agent-kpis, #agents-page .notice").first().waitFor()
    await page.locator("#pages-table, #agent-pages .notice").first().waitFor()
    if ((await page.locator("#agent-kpis").count()) > 0) {
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
      await page.locator(`#${id} canvas, #${id} .notice, #${id} p.muted:not(:has-text("Loading"))`).first().waitFor()
    }
    await screenshot("visibility")

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

    expect(cspViolations).toEqual([])
  }, 120_000)

  it("draws the dashboards from answers of their response schemas (sort, filters, paging)", async () => {
    // Until the analytics issues land, the twins answer 501: the drawing is checked on sample
    // answers validated by the endpoints' own Schemas, served in place of the twins.
    const requested: Array<string> = []
    const json = (body: unknown) => ({ status: 200, contentType: "application/json", body: JSON.stringify(body) })
    await page.route(/\/api\/v1\/me\/brands\/acme\/(agents|snapshots|industry-metrics|model)/, (route) => {
      const url = new URL(route.request().url())
      requested.push(url.pathname + url.search)
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
    await page.selectOption("select[name=kind]", "search_crawler")
    await page.locator("#agents-page form").first().getByRole("button", { name: "Apply" }).click()
    await page.waitForURL(/kind=search_crawler/)
    await page.selectOption("select[name=limit]", "25")
    await page.fill("input[name=status]", "ok")
    await page.locator("#agent-pages form").getByRole("button", { name: "Apply" }).click()
    await page.waitForURL(/status=ok/)
    await page.locator("#pages-range").waitFor()
    expect(requested.some((url) => url.startsWith("/api/v1/me/brands/acme/agents?") && url.includes("kind=search_crawler"))).toBe(true)
    expect(requested.some((url) => url.includes("/agents/pages?") && url.includes("kind=search_crawler") && url.includes("status=ok") && url.includes("sort=errors") && url.includes("limit=25"))).toBe(true)

    await page.goto(`${base}/#/brands/acme/visibility?range=30d`)
    for (const id of ["snapshots", "share-of-voice", "engines"]) await page.locator(`#${id} canvas`).waitFor()
    expect(await page.locator("#share-of-voice").textContent()).toContain("Globex")
    // Intervals: "±" in the tables, a change within noise marked n.s., a change from nothing shown as new.
    expect(await page.locator("#share-of-voice").textContent()).toContain("41.0% ± 3.0")
    const engines = await page.locator("#engines").textContent()
    expect(engines).toContain("44.2 ± 5.1")
    expect(engines).toContain("-1.2 pt (n.s.)")
    expect(engines).toContain("+3.1 pt")
    expect(engines).toContain("new")
    await screenshot("visibility-sample")
    await page.unroute(/\/api\/v1\/me\/brands\/acme\//)
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
    await screenshot("agents-demo", true)

    await page.goto(`${base}/#/brands/northwind-crm/visibility?range=30d`)
    for (const id of ["snapshots", "share-of-voice", "engines"]) await page.locator(`#${id} canvas`).waitFor()
    await page.waitForTimeout(500)
    await screenshot("visibility-demo", true)
    expect(cspViolations).toEqual([])
  }, 60_000)

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

  it("serves the API reference offline", async () => {
    await page.goto(`${base}/api/public/v1/docs`)
    await page.getByRole("heading", { name: "Endpoints" }).waitFor()
    expect(await page.locator("section.op").count()).toBe(21)
    await screenshot("api-reference")
  })
})
