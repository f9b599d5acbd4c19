import { describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { AccountsRepo } from "../src/accounts/Repo.js"
import { ObservationsRepo } from "../src/observations/Repo.js"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type TestApp, twoAppsWithKey } from "./helpers/app.js"

/**
 * The brand lists GET /brands and GET /brands/{slug} answer from memory (src/brands/Brands.ts) are
 * dropped on every change to what they hold, whoever makes it: through the service, and outside it
 * (a plan changed by the CLI, next scan times moved by the scanner, SQL by hand) through the
 * triggers' notifications (migrations/0016_account_cache_invalidation.sql).
 */

interface Listed {
  readonly brands: ReadonlyArray<{ readonly brand_slug: string; readonly next_scan_at: string }>
  readonly count: number
  readonly limit: number
}

const listOf = async (app: TestApp, key: string) => {
  const response = await app.fetch("/api/public/v1/brands", { headers: bearer(key) })
  expect(response.status).toBe(200)
  return (await json(response)) as Listed
}

/** The first answer `read` gives that `done` accepts, read again every 10 ms for at most 5 s. */
const eventually = async <A>(read: () => Promise<A>, done: (value: A) => boolean): Promise<A> => {
  let value = await read()
  for (let i = 0; i < 500 && !done(value); i++) {
    await Bun.sleep(10)
    value = await read()
  }
  return value
}

for (const backend of databaseBackends()) {
  describe(`brand lists in memory on ${backend}`, () => {
    it("a change made outside the Brands service reaches the list: a plan, a next scan time", async () => {
      const app = await makeTestApp(backend)
      try {
        const email = `lists-${backend}@example.test`
        const cookie = await signup(app, email)
        const { key } = await createKey(app, cookie)
        await createBrand(app, cookie, "acme")
        const before = await listOf(app, key)
        expect(before).toMatchObject({ count: 1, limit: 1 })
        // Read twice: the second answer comes from memory.
        expect(await listOf(app, key)).toEqual(before)

        await app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail(email, "growth")))
        expect((await eventually(() => listOf(app, key), (list) => list.limit !== 1)).limit).toBe(10)

        // The scanner claims the brand: its next scan moves to a day (growth's interval) from the claim.
        const claimedAt = new Date(Date.parse(before.brands[0]!.next_scan_at) + 3_600_000)
        await app.run(Effect.flatMap(ObservationsRepo, (repo) => repo.claimDue(claimedAt, 10)))
        const next = new Date(claimedAt.getTime() + 24 * 3_600_000).toISOString()
        const brand = async () => (await json(await app.fetch("/api/public/v1/brands/acme", { headers: bearer(key) }))) as { next_scan_at: string }
        expect((await eventually(brand, (found) => found.next_scan_at === next)).next_scan_at).toBe(next)
        expect((await listOf(app, key)).brands[0]!.next_scan_at).toBe(next)
      } finally {
        await app.dispose()
      }
    }, 60_000)
  })
}

const serverUrl = process.env.TEST_DATABASE_URL
describe.skipIf(!serverUrl)("brand lists across server processes (PostgreSQL server)", () => {
  it("a brand created through server A is listed by server B on the next request", async () => {
    const { a, b, cookie, key: { key }, dispose } = await twoAppsWithKey(serverUrl!, "lists-two@example.test")
    try {
      // B keeps the empty list.
      expect((await listOf(b, key)).count).toBe(0)
      expect((await listOf(b, key)).count).toBe(0)
      expect((await b.fetch("/api/public/v1/brands/acme", { headers: bearer(key) })).status).toBe(404)
      // The create answers once B has dropped the list: no waiting here.
      await createBrand(a, cookie, "acme")
      expect((await listOf(b, key)).brands.map((brand) => brand.brand_slug)).toEqual(["acme"])
      expect((await b.fetch("/api/public/v1/brands/acme", { headers: bearer(key) })).status).toBe(200)
    } finally {
      await dispose()
    }
  }, 60_000)
})
