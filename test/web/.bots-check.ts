import { chromium } from "playwright-core"
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.js"
import { axeSource, inspect, settle } from "./walk.js"
const base = "http://127.0.0.1:18200"
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true })
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
page.on("pageerror", (e) => console.log("pageerror", e.message))
await page.goto(`${base}/#/signin`)
await page.fill("#email", "demo@example.com")
await page.fill("#password", "demo-password-2026")
await page.click("#submit")
await page.getByRole("heading", { name: "Brands" }).waitFor()
const axe = axeSource()
for (const width of [1280, 390]) {
  await page.setViewportSize({ width, height: 844 })
  for (const [name, route, ready] of [
    ["agents", "#/brands/northwind-crm/agents?range=30d", "#pages-table tbody tr"],
    ["detail", "#/brands/northwind-crm/agents?range=30d&path=/pricing", "#page-bots-table tbody tr"]
  ] as const) {
    await page.goto(`${base}/${route}`)
    await settle(page, ready)
    const f = await inspect(page, axe)
    console.log(width, name, JSON.stringify(f))
    await page.screenshot({ path: `/tmp/bots-shots/${name}-${width}.png`, fullPage: true })
  }
}
// click a row of the list
await page.setViewportSize({ width: 1280, height: 900 })
await page.goto(`${base}/#/brands/northwind-crm/agents?range=30d`)
await page.locator("#pages-table tbody tr[data-path='/pricing'] td").nth(2).click()
await page.waitForURL(/path=%2Fpricing/)
await page.locator("#page-bots-table tbody tr").first().waitFor()
console.log(await page.locator("#page-bots-table tbody tr").evaluateAll((rows) => rows.map((r) => [r.getAttribute("data-bot"), r.querySelector("[data-verdict]")?.getAttribute("data-verdict"), r.querySelector("[data-verdict]")?.textContent])))
console.log("focused", await page.evaluate(() => document.activeElement?.id))
await page.selectOption("select[name=range]", "7d")
await page.waitForURL(/range=7d/)
await page.locator("#page-bots-table tbody tr").first().waitFor()
console.log("after change", page.url(), await page.evaluate(() => document.activeElement?.id))
await browser.close()
