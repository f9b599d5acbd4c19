import { describe, expect, it } from "bun:test"
import { bearer, twoAppsWithKey } from "./helpers/app.js"

/**
 * Two server processes on one PostgreSQL database, each with its own in-process key cache:
 * a revoke in one reaches the other through NOTIFY, so the key fails there on the next request.
 */
const serverUrl = process.env.TEST_DATABASE_URL
describe.skipIf(!serverUrl)("revocation across server processes (PostgreSQL server)", () => {
  it("a key revoked on server A is refused by server B on its next request", async () => {
    const { a, b, cookie, key: { id, key }, dispose } = await twoAppsWithKey(serverUrl!, "revoke@example.test")
    try {
      // B caches the key as valid.
      expect((await b.fetch("/api/public/v1/brands", { headers: bearer(key) })).status).toBe(200)
      expect((await b.fetch("/api/public/v1/brands", { headers: bearer(key) })).status).toBe(200)
      const revoked = await a.fetch(`/api/v1/me/api-keys/${id}/revoke`, { method: "POST", headers: { cookie } })
      expect(revoked.status).toBe(200)
      // NOTIFY is delivered asynchronously; it arrives within milliseconds.
      let status = 200
      for (let i = 0; i < 100 && status === 200; i++) {
        await Bun.sleep(10)
        status = (await b.fetch("/api/public/v1/brands", { headers: bearer(key) })).status
      }
      expect(status).toBe(401)
    } finally {
      await dispose()
    }
    // With TEST_SERVERS=2 each app is two server processes: four start here.
  }, 60_000)
})
