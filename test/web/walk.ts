import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import type { Page } from "playwright-core"

/**
 * Every page of the web application on the demo workspace, for the browser test (no sideways
 * scroll, no serious accessibility violation, at a desktop and a phone width) and the screenshot
 * script. One list: a new screen is one more line here.
 */

export interface WalkPage {
  /** File name of its screenshots (docs/screenshots/<name>-<width>.png). */
  readonly name: string
  /** The hash route, from the demo workspace. */
  readonly route: string
  /** An element that exists once the page has drawn its data (or its empty state). */
  readonly ready: string
  /** Pages drawn before signing in. */
  readonly signedOut?: boolean
}

const DEMO = "northwind-crm"

const CORE: ReadonlyArray<WalkPage> = [
  { name: "signin", route: "#/signin", ready: "#email", signedOut: true },
  { name: "signup", route: "#/signup", ready: "#account_name", signedOut: true },
  { name: "start", route: `#/start?brand=${DEMO}`, ready: "#onboarding ol.steps" },
  { name: "brands", route: "#/brands", ready: "[data-brand] .ingestion-health, [data-brand] h3 + div p.muted:not(.loading)" },
  { name: "agents", route: `#/brands/${DEMO}/agents?range=30d`, ready: "#pages-table tbody tr, #agents-page .empty" },
  { name: "agents-filtered", route: `#/brands/${DEMO}/agents?range=30d&kind=search_crawler`, ready: "#pages-table tbody tr" },
  { name: "agents-page-bots", route: `#/brands/${DEMO}/agents?range=30d&path=%2Fpricing`, ready: "#page-bots-table tbody tr" },
  { name: "visibility", route: `#/brands/${DEMO}/visibility?range=30d`, ready: "#engines table, #engines .empty" },
  { name: "keys", route: "#/settings/security/api-keys", ready: "#key-usage" },
  { name: "webhooks", route: "#/settings/webhooks", ready: "#event-log, main .empty" }
]

/** The brand's data screens (src/web/app/screens/): walked wherever that folder is part of the app. */
const SCREENS: ReadonlyArray<WalkPage> = [
  { name: "actions", route: `#/brands/${DEMO}/actions?range=30d`, ready: "#actions li, #actions-screen .empty" },
  { name: "brand-settings", route: `#/brands/${DEMO}/settings`, ready: "#settings-screen #last-scan" },
  { name: "attribution", route: `#/brands/${DEMO}/attribution?range=30d`, ready: "#attribution-engines-table tr[data-engine], #attribution-screen .empty" },
  { name: "search-performance", route: `#/brands/${DEMO}/search-performance?range=30d`, ready: "#search-engines-table tr[data-engine], #search-performance-screen .empty" },
  { name: "competitors", route: `#/brands/${DEMO}/competitors`, ready: "#competitors-screen" },
  { name: "competitor", route: `#/brands/${DEMO}/competitors?competitor=Pipeline.io`, ready: "#competitors-screen" },
  { name: "prompts", route: `#/brands/${DEMO}/prompts`, ready: "#prompts-screen" },
  { name: "prompts-topic", route: `#/brands/${DEMO}/prompts?topic=crm%20software`, ready: "#prompts-screen" },
  { name: "mentions", route: `#/brands/${DEMO}/mentions?sentiment=pos&region=US`, ready: "#mentions-screen" },
  { name: "citations", route: `#/brands/${DEMO}/citations?range=30d`, ready: "#citations-screen" },
  { name: "fanouts", route: `#/brands/${DEMO}/fanouts`, ready: "#fanouts-screen" },
  { name: "topics", route: `#/brands/${DEMO}/topics`, ready: "#topics-screen" },
  { name: "ranking", route: `#/brands/${DEMO}/ranking?topic=crm%20software`, ready: "#ranking-screen" },
  { name: "portfolio", route: "#/portfolio", ready: "#portfolio-screen" },
  { name: "catalog", route: "#/catalog", ready: "#catalog-table tbody tr, #catalog-screen .error" }
]

const HAVE_SCREENS = existsSync(join(import.meta.dir, "..", "..", "src", "web", "app", "screens"))

export const PAGES: ReadonlyArray<WalkPage> = HAVE_SCREENS ? [...CORE, ...SCREENS] : CORE

export const WIDTHS = [
  { label: "desktop", width: 1280, height: 900 },
  { label: "phone", width: 390, height: 844 }
] as const

/** axe-core's browser build, evaluated in each page. */
export const axeSource = () => readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** Waits for the page's data, then for every "Loading…" to be replaced and the charts to be drawn. */
export const settle = async (page: Page, ready: string, timeout = 45_000) => {
  await page.locator(ready).first().waitFor({ timeout })
  await page.waitForFunction(() => document.querySelectorAll(".loading, [aria-busy=true]").length === 0, null, { timeout })
  await page.waitForTimeout(150)
}

export interface Finding {
  readonly overflow: { readonly scrollWidth: number; readonly viewport: number; readonly widest: string | null }
  readonly violations: ReadonlyArray<{ readonly id: string; readonly impact: string; readonly help: string; readonly targets: ReadonlyArray<string> }>
}

/** Horizontal overflow of the document, and axe-core's serious and critical violations. */
export const inspect = async (page: Page, axe: string): Promise<Finding> => {
  const overflow = await page.evaluate(() => {
    const viewport = document.documentElement.clientWidth
    const scrollWidth = document.documentElement.scrollWidth
    if (scrollWidth <= viewport) return { scrollWidth, viewport, widest: null }
    let widest: string | null = null
    let right = viewport
    for (const element of Array.from(document.querySelectorAll("body *"))) {
      const box = element.getBoundingClientRect()
      if (box.right > right + 0.5 && getComputedStyle(element).position !== "fixed") {
        right = box.right
        widest = `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ""}${element.className && typeof element.className === "string" ? `.${element.className.split(" ").join(".")}` : ""}`
      }
    }
    return { scrollWidth, viewport, widest }
  })
  if ((await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe)) === "undefined") {
    // Evaluated through the DevTools protocol: a <script> tag would be (rightly) refused by the page's CSP.
    await page.evaluate(axe)
  }
  const violations = await page.evaluate(async () => {
    const runner = (window as unknown as { axe: { run: (context: Document, options: unknown) => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: Array<string> }> }> }> } }).axe
    const result = await runner.run(document, { resultTypes: ["violations"], runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } })
    return result.violations.map((v) => ({ id: v.id, impact: v.impact ?? "", help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")) }))
  })
  return { overflow, violations: violations.filter((v) => v.impact === "serious" || v.impact === "critical") }
}
