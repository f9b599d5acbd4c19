import { describe, expect, it } from "bun:test"
import { bearer, createBrand, createKey, databaseBackends, makeTestApp, signup, type TestApp } from "./helpers/app.js"

/**
 * What an operator changes in SQL by hand reaches every cached answer at once: the triggers of
 * migrations/0016_account_cache_invalidation.sql and 0017_cache_invalidation_by_sql.sql notify the
 * invalidation channel at the commit of every row change that can change an answer.
 */

/** The first status `path` answers that is not `from`, asked every 10 ms for at most 5 s. */
const statusAfter = async (app: TestApp, path: string, key: string, from: number): Promise<number> => {
  let status = from
  for (let i = 0; i < 500 && status === from; i++) {
    status = (await app.fetch(path, { headers: bearer(key) })).status
    if (status === from) await Bun.sleep(10)
  }
  return status
}

const cachedOk = async (app: TestApp, path: string, key: string) => {
  // Twice: the second answer comes from the process's memory.
  for (let i = 0; i < 2; i++) expect((await app.fetch(path, { headers: bearer(key) })).status).toBe(200)
}

for (const backend of databaseBackends()) {
  describe(`changes made in SQL by hand on ${backend}`, () => {
    it("a key revoked in SQL, or whose account is deleted in SQL, is refused at once, MCP too", async () => {
      const app = await makeTestApp(backend)
      try {
        const revoked = await createKey(app, await signup(app, `sql-revoke-${backend}@example.test`))
        await cachedOk(app, "/api/public/v1/brands", revoked.key)
        await app.sql(`update api_keys set revoked_at = now() where id = '${revoked.id}'`)
        expect(await statusAfter(app, "/api/public/v1/brands", revoked.key, 200)).toBe(401)

        const orphan = await createKey(app, await signup(app, `sql-delete-${backend}@example.test`))
        await cachedOk(app, "/api/public/v1/brands", orphan.key)
        await app.sql(`delete from accounts where id = (select account_id from api_keys where id = '${orphan.id}')`)
        expect(await statusAfter(app, "/api/public/v1/brands", orphan.key, 200)).toBe(401)
        const mcp = await app.fetch("/mcp", {
          method: "POST",
          headers: { ...bearer(orphan.key), "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
        })
        expect(mcp.status).toBe(401)
      } finally {
        await app.dispose()
      }
    }, 60_000)

    it("a brand moved to another account in SQL is no longer its old owner's", async () => {
      const app = await makeTestApp(backend)
      try {
        const ownerCookie = await signup(app, `sql-move-from-${backend}@example.test`)
        const owner = await createKey(app, ownerCookie)
        await createBrand(app, ownerCookie, "moved")
        const other = await createKey(app, await signup(app, `sql-move-to-${backend}@example.test`))
        await cachedOk(app, "/api/public/v1/brands/moved", owner.key)
        expect((await app.fetch("/api/public/v1/brands/moved", { headers: bearer(other.key) })).status).toBe(404)

        await app.sql(
          `update brands set account_id = (select account_id from api_keys where id = '${other.id}') where slug = 'moved'`
        )
        expect(await statusAfter(app, "/api/public/v1/brands/moved", owner.key, 200)).toBe(404)
        expect(await statusAfter(app, "/api/public/v1/brands/moved", other.key, 404)).toBe(200)
      } finally {
        await app.dispose()
      }
    }, 60_000)
  })
}
