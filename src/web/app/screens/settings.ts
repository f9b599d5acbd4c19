import type { ImportResponse, ScanRequestResponse } from "../../../observations/Api.js"
import { type ApiError, type Brand, get, type Me, post, type ScanStatusResponse } from "../api.js"
import { brandNav } from "./nav.js"
import { append, clear, copyButton, formatDate, formatNumber, h } from "../dom.js"
import { planLabel } from "../labels.js"
import { planWall } from "../logSources.js"
import { nextScanText } from "../schedule.js"
import { brands, brandTitle, emptyState, engineLabel, errorState, pageHead, section, verticalLabel } from "../kit.js"

/**
 * A brand's settings: what identifies it, what to copy into a tag or a log source, and its answers:
 * the last scan, "Scan now" (POST .../scans) and an import of answers collected elsewhere (POST .../observations).
 */

type ScanRequest = typeof ScanRequestResponse.Encoded
type ImportResult = typeof ImportResponse.Encoded

/** The import's answer as the server's schema says, checked before it is drawn (the body is read by hand). */
const isImportResult = (body: unknown): body is ImportResult =>
  typeof body === "object" && body !== null &&
  "imported" in body && typeof body.imported === "number" &&
  "skipped" in body && typeof body.skipped === "number" &&
  "errors" in body && Array.isArray(body.errors)

const item = (label: string, ...value: ReadonlyArray<Node | string>) => [h("dt", null, label), h("dd", null, ...value)]

/** The server's own message as a sentence (the screens' errorState would add a generic lead that misleads here). */
const refusal = (lead: string, error: ApiError) => {
  const message = typeof error.body.error === "string" ? error.body.error : ""
  const text = message === "" ? `${lead} (status ${error.status}).` : `${lead}: ${message.charAt(0).toUpperCase()}${message.slice(1)}${/[.!?]$/.test(message) ? "" : "."}`
  return h("p", { class: "error", role: "alert" }, text)
}

/** The plan that brings scanning on request, and what else it gives. */
const SCAN_PLAN = "starter"

const answersCard = (slug: string, me: Me | null, scans: Awaited<ReturnType<typeof get<ScanStatusResponse>>>) => {
  const card = section("Answers from AI engines", "brand-answers")
  const scanStatus = h("div", { "aria-live": "polite" })
  const importStatus = h("div", { "aria-live": "polite" })
  const paid = me !== null && me.account.plan !== "free"

  const scanNow = h("button", {
    type: "button",
    id: "scan-now",
    onclick: async () => {
      scanNow.disabled = true
      clear(scanStatus)
      const result = await post<ScanRequest>(`/api/v1/me/brands/${slug}/scans`)
      scanNow.disabled = false
      if (!result.ok) return append(scanStatus, [refusal("The scan was not started", result.error)])
      const engines = result.value.engines.map(engineLabel).join(", ")
      append(scanStatus, [
        h(
          "p",
          { class: "success", role: "status", id: "scan-requested" },
          `Scan requested: it starts within ${result.value.scanner_interval_seconds} seconds and asks ${engines} every monitored prompt. `,
          "Its answers appear on ",
          h("a", { href: `#/brands/${slug}/visibility` }, "Visibility"),
          " as they are stored."
        )
      ])
    }
  }, "Scan now")

  const file = h("input", { type: "file", id: "import-file", accept: ".json,.ndjson,.jsonl,.gz,application/json,application/x-ndjson,application/gzip" })
  const upload = h("button", {
    type: "button",
    id: "import-upload",
    class: "secondary",
    onclick: async () => {
      clear(importStatus)
      const chosen = file.files?.[0]
      if (chosen === undefined) return append(importStatus, [h("p", { class: "error", role: "alert" }, "Choose a file of answers first.")])
      upload.disabled = true
      let response: Response
      try {
        // The file as it is (JSON array, NDJSON, or gzip of either): the server detects the encoding from the bytes.
        response = await fetch(`/api/v1/me/brands/${slug}/observations`, { method: "POST", credentials: "same-origin", body: chosen })
      } catch {
        upload.disabled = false
        return append(importStatus, [h("p", { class: "error", role: "alert" }, "The server cannot be reached: check your connection and try again.")])
      }
      upload.disabled = false
      const text = await response.text()
      let body: unknown = null
      try {
        body = JSON.parse(text)
      } catch {
        body = { error: text }
      }
      if (!response.ok) {
        const error = typeof body === "object" && body !== null && "error" in body && typeof body.error === "string" ? body.error : ""
        return append(importStatus, [refusal("The file was not imported", { status: response.status, body: { error } })])
      }
      if (!isImportResult(body)) return append(importStatus, [refusal("The server's answer could not be read", { status: response.status, body: {} })])
      const result = body
      append(importStatus, [
        h(
          "p",
          { class: result.errors.length === 0 ? "success" : "notice", role: "status", id: "import-result" },
          `${formatNumber(result.imported)} answer${result.imported === 1 ? "" : "s"} imported, ${formatNumber(result.skipped)} already stored` +
            (result.errors.length === 0 ? "." : `, ${formatNumber(result.errors.length)} refused:`)
        ),
        result.errors.length === 0
          ? null
          : h("ul", { id: "import-errors" }, result.errors.slice(0, 20).map((e) => h("li", null, `Line ${e.line}: ${e.error}`))),
        result.errors.length > 20 ? h("p", { class: "muted" }, `and ${result.errors.length - 20} more.`) : null
      ])
    }
  }, "Import answers")

  {
    const status = scans
    const last = status.ok ? status.value.engines : []
    const newest = last.reduce<string | null>((n, e) => (n === null || e.scanned_at > n ? e.scanned_at : n), null)
    card.fill(
      !status.ok
        ? errorState("The last scan", status.error)
        : newest === null
        ? h("p", { id: "last-scan" }, "No scan has run for this brand yet.")
        : h(
          "p",
          { id: "last-scan" },
          `Last scan ${formatDate(newest)}: ${formatNumber(last.reduce((n, e) => n + e.observations, 0))} answers from `,
          `${last.map((e) => engineLabel(e.engine)).join(", ")}.`
        ),
      h("h3", null, "Scan now"),
      paid
        ? h(
          "div",
          null,
          h("p", { class: "muted" }, "Asks the answer engines every monitored prompt now instead of at the next scheduled scan (at most once an hour)."),
          h("p", null, scanNow),
          scanStatus
        )
        : planWall({
          what: "Scanning on request",
          plan: SCAN_PLAN,
          current: me?.account.plan ?? "free",
          gives: "scans on request and every 72 hours instead of weekly, 3 brands, 50 monitored prompts and shipped log files",
          email: me?.user.email ?? null,
          id: "scan-plan"
        }),
      h("h3", null, "Import answers"),
      h(
        "p",
        { class: "muted" },
        "Answers you collected elsewhere, on any plan: a JSON array or NDJSON file (gzip allowed), at most 5,000 answers, one object per answer with ",
        h("code", null, "prompt"),
        ", ",
        h("code", null, "engine"),
        ", ",
        h("code", null, "observed_at"),
        " and ",
        h("code", null, "response"),
        " (optional ",
        h("code", null, "citations"),
        ", ",
        h("code", null, "region"),
        ", ",
        h("code", null, "language"),
        "). A prompt not yet monitored is added, within your plan's prompt cap."
      ),
      h("div", { class: "row" }, h("div", { class: "field grow" }, h("label", { for: "import-file" }, "File of answers"), file), h("div", null, upload)),
      importStatus
    )
  }
  return card.element
}

export const settingsScreen = (slug: string) => {
  const card = section("Brand", "brand-settings")
  const answers = h("div", null, section("Answers from AI engines", "brand-answers").element)
  void Promise.all([brands(), get<ScanStatusResponse>(`/api/v1/me/brands/${slug}/scans`), get<Me>("/api/v1/me")]).then(([list, scans, who]) => {
    const me = who.ok ? who.value : null
    const brand: Brand | undefined = list.find((b) => b.brand_slug === slug)
    if (!brand) {
      answers.replaceChildren()
      return card.fill(emptyState("This brand is not in your account.", h("a", { href: "#/brands" }, "Pick a brand")))
    }
    const lastScan = scans.ok ? scans.value.engines.reduce<string | null>((n, e) => (n === null || e.scanned_at > n ? e.scanned_at : n), null) : null
    card.fill(
      h(
        "dl",
        { class: "settings" },
        item("Name", brand.brand_name),
        item("Website", brand.domain),
        item("Industry", verticalLabel(brand.vertical)),
        item("Slug", h("code", { id: "brand-slug-value" }, brand.brand_slug), " ", copyButton(() => brand.brand_slug, "Copy slug")),
        item("Site id", h("code", { id: "site-id-value" }, brand.site_id), " ", copyButton(() => brand.site_id, "Copy site id")),
        brand.scan_frequency_hours === undefined
          ? []
          : item("Scans", `every ${brand.scan_frequency_hours} hours (set by your ${me ? `${planLabel(me.account.plan)} ` : ""}plan)`),
        brand.next_scan_at === undefined ? [] : item("Next scan", h("span", { id: "next-scan" }, nextScanText(brand.next_scan_at, Date.now(), lastScan))),
        item("Added", formatDate(brand.added_at))
      ),
      h("p", { class: "muted" }, "The slug names the brand in API calls; the site id goes into the JavaScript tag and the log-drain URL (see the Brands page for each log source).")
    )
    answers.replaceChildren(answersCard(slug, me, scans))
  })
  return h(
    "div",
    { id: "settings-screen" },
    brandNav(slug, "settings"),
    pageHead(brandTitle(slug, h("h1"), (n) => `Settings · ${n}`)),
    card.element,
    answers
  )
}
