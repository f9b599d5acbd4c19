import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { BrandsRepo } from "../../src/brands/Repo.js"
import { ObservationsRepo } from "../../src/observations/Repo.js"
import { createBrand, databaseBackends, json, makeTestApp, signup, type Backend, type TestApp } from "../helpers/app.js"

/** GET /api/v1/me/brands/{slug}/scans: the dashboard's last scan per engine, for the account's own brands only. */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

for (const backend of backends) {
  describe(`scan status on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    let other: string
    beforeAll(async () => {
      app = await makeTestApp(backend, { now: new Date("2026-03-15T12:00:00Z") })
      cookie = await signup(app, "status@acme.test")
      await createBrand(app, cookie, "acme")
      other = await signup(app, "other@acme.test")
    })
    afterAll(() => app.dispose())

    const get = async (slug: string, session: string | null = cookie) => {
      const response = await app.fetch(`/api/v1/me/brands/${slug}/scans`, { headers: session === null ? {} : { cookie: session } })
      return { status: response.status, body: (await json(response)) as any }
    }

    it("empty before the first scan; then the last scan per engine with its reason", async () => {
      expect(await get("acme")).toEqual({
        status: 200,
        body: { brand_slug: "acme", engines: [], month_tokens: 0, monthly_token_budget: null }
      })
      await app.run(Effect.gen(function*() {
        const user = yield* (yield* AccountsRepo).findUserByEmail("status@acme.test")
        const accountId = user._tag === "Some" ? user.value.accountId : 0
        const brand = yield* (yield* BrandsRepo).get(accountId, "acme")
        const brandId = brand._tag === "Some" ? brand.value.id : 0
        yield* (yield* ObservationsRepo).recordEngineStatus(accountId, brandId, [
          { engine: "perplexity", scannedAt: new Date("2026-03-15T11:00:00Z"), observations: 0, failures: 6, lastError: "HTTP 401: bad key", failuresByReason: { unauthorized: 1, skipped: 5 }, tokens: 0 },
          { engine: "chatgpt", scannedAt: new Date("2026-03-15T11:00:00Z"), observations: 6, failures: 0, lastError: null, failuresByReason: {}, tokens: 4104 }
        ])
      }))
      const { body, status } = await get("acme")
      expect(status).toBe(200)
      expect(body.engines).toEqual([
        { engine: "chatgpt", scanned_at: "2026-03-15T11:00:00.000Z", observations: 6, failures: 0, failures_by_reason: {}, last_error: null, tokens: 4104 },
        {
          engine: "perplexity",
          scanned_at: "2026-03-15T11:00:00.000Z",
          observations: 0,
          failures: 6,
          failures_by_reason: { unauthorized: 1, skipped: 5 },
          last_error: "HTTP 401: bad key",
          tokens: 0
        }
      ])
    })

    it("another account's brand is 404; no session is 401", async () => {
      expect((await get("acme", other)).status).toBe(404)
      expect((await get("nope")).status).toBe(404)
      expect((await get("acme", null)).status).toBe(401)
    })
  })
}
