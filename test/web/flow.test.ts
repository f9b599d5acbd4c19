import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { SLUG_MAX, slugFromName } from "../../src/brands/Slug.js"
import { ObservationsRepo } from "../../src/observations/Repo.js"
import { SLUG_MAX_LENGTH } from "../../src/platform/Schemas.js"
import { safeReturn } from "../../src/web/app/returnTo.js"
import { nextScanText } from "../../src/web/app/schedule.js"
import { createBrand, databaseBackends, makeTestApp, signup, type TestApp } from "../helpers/app.js"

/**
 * What a marketer meets first in the web application, on the server and in its pure helpers: the slug made
 * from a brand's name, the return to the page asked for after sign-in, "Scan now", and the twins the AI
 * referrals and AI search screens read.
 */

describe("slug made from a brand's name", () => {
  it("drops accents, reads & as and, joins words with hyphens", () => {
    expect(slugFromName("Café Müller & Söhne")).toBe("cafe-muller-and-sohne")
    expect(slugFromName("Ærø Straße")).toBe("aero-strasse")
    expect(slugFromName("Łódź Ørsted")).toBe("lodz-orsted")
    expect(slugFromName("Pipeline.io")).toBe("pipeline-io")
    expect(slugFromName("  --Acme--  ")).toBe("acme")
    // Full-width letters and digits fold to their ASCII forms.
    expect(slugFromName("ＡＣＭＥ１")).toBe("acme1")
    // The Latin part of a mixed name is kept.
    expect(slugFromName("株式会社 Sony 2")).toBe("sony-2")
  })

  it("gives null for a name with no Latin letter or digit, so the person types one", () => {
    expect(slugFromName("東京カフェ")).toBeNull()
    expect(slugFromName("Москва")).toBeNull()
    expect(slugFromName("  ")).toBeNull()
  })

  it("stays within the slug's length and pattern", () => {
    expect(SLUG_MAX).toBe(SLUG_MAX_LENGTH)
    const long = slugFromName(`${"word ".repeat(30)}end`)!
    expect(long.length).toBeLessThanOrEqual(SLUG_MAX)
    expect(long).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
  })
})

describe("the page asked for before signing in", () => {
  it("keeps a route of the application, with its query", () => {
    expect(safeReturn("#/brands/acme/attribution?range=7d")).toBe("#/brands/acme/attribution?range=7d")
    expect(safeReturn("/settings/webhooks")).toBe("#/settings/webhooks")
  })

  it("refuses anything else: other sites, script URLs, the sign-in pages, nothing", () => {
    for (
      const value of [
        null,
        "",
        "#",
        "https://evil.example/",
        "//evil.example/",
        "#//evil.example",
        "javascript:alert(1)",
        "#/brands\\..\\x",
        "#/a b",
        "#/brands#/x",
        "#/signin",
        "#/signup?next=%23%2Fbrands",
        `#/${"x".repeat(2001)}`
      ]
    ) expect([value, safeReturn(value)]).toEqual([value, null])
  })
})

describe("the next scan on the Settings screen", () => {
  const now = Date.parse("2026-11-27T12:00:00Z")
  it("is a date while it is to come, and says it is due (and why it may wait) once passed", () => {
    expect(nextScanText("2026-11-28T00:05:00Z", now, null)).toBe("2026-11-28 00:05 UTC")
    const due = nextScanText("2026-11-27T00:05:00Z", now, "2026-11-26T00:22:00Z")
    expect(due).toStartWith("due since 2026-11-27 00:05 UTC, not started")
    expect(due).toContain("configured answer engines")
    expect(nextScanText("2026-11-27T00:05:00Z", now, "2026-11-27T00:06:00Z")).toBe("due since 2026-11-27 00:05 UTC; the last scan ran at 2026-11-27 00:06 UTC")
  })
})

for (const backend of databaseBackends()) {
  describe(`brands without a slug, scan now and the traffic twins (${backend})`, () => {
    let app: TestApp
    let cookie: string
    let otherCookie: string
    const email = "flow@example.test"
    const post = (path: string, body: unknown, as = cookie) =>
      app.fetch(path, { method: "POST", headers: { "content-type": "application/json", cookie: as }, body: JSON.stringify(body) })

    beforeAll(async () => {
      // Scan now reads the engines' settings from the environment, which the test below changes.
      app = await makeTestApp(backend, { inProcess: "scan now reads ENGINE_* from process.env, which the test changes" })
      cookie = await signup(app, email)
      otherCookie = await signup(app, "flow-other@example.test")
      await createBrand(app, cookie, "acme")
      await createBrand(app, otherCookie, "theirs")
    }, 60_000)
    afterAll(() => app.dispose())

    it("makes the slug from the name when it is left out, and says so when it cannot", async () => {
      // Starter: room for a second and third brand.
      await app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail(email, "starter")))
      const made = await post("/api/v1/me/brands", { brand_name: "Café Müller", domain: "cafe-muller.de", vertical: "retail" })
      expect(made.status).toBe(201)
      expect(((await made.json()) as { brand_slug: string }).brand_slug).toBe("cafe-muller")
      // The same name again: its slug is taken, as a typed one would be.
      const again = await post("/api/v1/me/brands", { brand_name: "Café  Müller", domain: "cafe-muller.com", vertical: "retail" })
      expect(again.status).toBe(409)
      const cjk = await post("/api/v1/me/brands", { brand_name: "東京カフェ", domain: "tokyo-cafe.jp", vertical: "retail" })
      expect(cjk.status).toBe(400)
      expect(((await cjk.json()) as { error: string }).error).toContain("brand_slug required")
      // A slug sent is kept as sent, and still checked.
      const bad = await post("/api/v1/me/brands", { brand_slug: "Not A Slug", brand_name: "X", domain: "x.com", vertical: "saas" })
      expect(bad.status).toBe(400)
    })

    it("scan now: refused on the free plan, without engines, for another account's brand; moves the next scan, then waits an hour", async () => {
      const scan = (slug: string, as = cookie) => post(`/api/v1/me/brands/${slug}/scans`, {}, as)
      const saved = { url: process.env.ENGINE_CHATGPT_URL, model: process.env.ENGINE_CHATGPT_MODEL }
      try {
        delete process.env.ENGINE_CHATGPT_URL
        delete process.env.ENGINE_CHATGPT_MODEL
        // The other account is on the free plan: a 403 that names the plans and who changes them.
        const free = await scan("theirs", otherCookie)
        expect(free.status).toBe(403)
        const freeBody = (await free.json()) as { error: string }
        expect(freeBody.error).toContain("paid plans")
        expect(freeBody.error).toContain("bun run cli plan set")
        // Never another account's brand.
        expect((await scan("theirs")).status).toBe(404)
        // A paid plan on a server with no engine: 503, saying what the operator sets and that imports work.
        await app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail(email, "starter")))
        const none = await scan("acme")
        expect(none.status).toBe(503)
        expect(((await none.json()) as { error: string }).error).toContain("ENGINE_<SLUG>_URL")

        process.env.ENGINE_CHATGPT_URL = "http://127.0.0.1:9/never-called"
        process.env.ENGINE_CHATGPT_MODEL = "test-model"
        // The brand's first scan was due at its creation; pushed a week out, then asked for now.
        const brands = async () =>
          ((await (await app.fetch("/api/v1/me/brands", { headers: { cookie } })).json()) as { brands: Array<{ id: number; brand_slug: string; next_scan_at: string }> }).brands
        const acme = (await brands()).find((b) => b.brand_slug === "acme")!
        await app.sql(`update brands set next_scan_at = now() + interval '7 days' where id = ${acme.id}`)
        const before = Date.now()
        const asked = await scan("acme")
        expect(asked.status).toBe(202)
        const body = (await asked.json()) as { brand_slug: string; next_scan_at: string; engines: Array<string>; scanner_interval_seconds: number }
        expect(body.brand_slug).toBe("acme")
        expect(body.engines).toEqual(["chatgpt"])
        expect(body.scanner_interval_seconds).toBeGreaterThan(0)
        expect(Date.parse(body.next_scan_at)).toBeGreaterThanOrEqual(before - 1000)
        expect(Date.parse(body.next_scan_at)).toBeLessThanOrEqual(Date.now() + 1000)
        // The scanner's claim sees it due (the brand list answers the new date too).
        const due = await app.run(Effect.flatMap(ObservationsRepo, (repo) => repo.claimDue(new Date(Date.now() + 1000), 10)))
        expect(due.map((d) => d.slug)).toContain("acme")

        // Scanned a minute ago: a scan on request waits an hour after the last one.
        const me = (await (await app.fetch("/api/v1/me", { headers: { cookie } })).json()) as { account: { id: number } }
        await app.run(Effect.flatMap(ObservationsRepo, (repo) =>
          repo.recordEngineStatus(me.account.id, acme.id, [{
            engine: "chatgpt",
            scannedAt: new Date(Date.now() - 60_000),
            observations: 3,
            failures: 0,
            lastError: null,
            failuresByReason: {},
            tokens: 0
          }])))
        const soon = await scan("acme")
        expect(soon.status).toBe(409)
        expect(((await soon.json()) as { error: string }).error).toContain("waits an hour")
      } finally {
        if (saved.url === undefined) delete process.env.ENGINE_CHATGPT_URL
        else process.env.ENGINE_CHATGPT_URL = saved.url
        if (saved.model === undefined) delete process.env.ENGINE_CHATGPT_MODEL
        else process.env.ENGINE_CHATGPT_MODEL = saved.model
      }
    })

    it("answers the AI referrals and AI search twins the new screens read, for the session's brands only", async () => {
      for (const suffix of ["attribution?range=7d", "search-performance?range=90d"]) {
        const own = await app.fetch(`/api/v1/me/brands/acme/${suffix}`, { headers: { cookie } })
        expect(own.status).toBe(200)
        const body = (await own.json()) as { brand_slug: string; trend: Array<unknown> }
        expect(body.brand_slug).toBe("acme")
        expect(body.trend.length).toBe(suffix.includes("7d") ? 7 : 90)
        expect((await app.fetch(`/api/v1/me/brands/theirs/${suffix}`, { headers: { cookie } })).status).toBe(404)
      }
      expect((await app.fetch("/api/v1/me/brands/acme/attribution?range=1y", { headers: { cookie } })).status).toBe(400)
    })
  })
}
