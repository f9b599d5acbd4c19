import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { haveChromium, openBrowser, type Served, startServer } from "./chromium.js"
import { axeSource, inspect, WIDTHS } from "./walk.js"

/**
 * The API reference page (/api/public/v1/docs) in headless Chromium, at the desktop and the phone
 * width of the web application's walk: no sideways scroll and no serious or critical axe-core violation.
 */
describe.skipIf(!haveChromium)("the API reference page in a browser", () => {
  let served: Served
  beforeAll(async () => {
    served = await startServer({})
  }, 180_000)
  afterAll(() => served?.stop())

  for (const { height, label, width } of WIDTHS) {
    it(`at ${width} px (${label}): fits the viewport, no serious or critical axe-core violation`, async () => {
      const browser = await openBrowser(width, height)
      try {
        await browser.page.goto(`${served.base}/api/public/v1/docs`, { waitUntil: "load" })
        await browser.page.locator("main h1").waitFor()
        const finding = await inspect(browser.page, axeSource())
        expect(finding.overflow).toEqual({ scrollWidth: width, viewport: width, widest: null })
        expect(finding.violations).toEqual([])
        expect(browser.pageErrors).toEqual([])
      } finally {
        await browser.close()
      }
    }, 120_000)
  }
})
