import { describe, expect, it } from "bun:test"
import { bearer, createBrand, createKey, json, makeTestApp, serverSchemaUrl, signup, type TestApp } from "../helpers/app.js"
import { startPgProxy } from "../helpers/pgProxy.js"

/**
 * A server process whose LISTEN connection dies, loudly (its backend terminated, as a restart, a
 * failover or an idle-session timeout does) or silently (a peer gone without closing the socket),
 * answers from the database until it listens again, then drops every cache: a key revoked or a brand
 * added meanwhile elsewhere is seen within seconds, never served stale from memory.
 */
const serverUrl = process.env.TEST_DATABASE_URL

/** The first status that `read` gives other than `from`, asked every 20 ms for at most `ms`. */
const statusAfter = async (read: () => Promise<number>, from: number, ms: number): Promise<number> => {
  const until = Date.now() + ms
  let status = await read()
  while (status === from && Date.now() < until) {
    await Bun.sleep(20)
    status = await read()
  }
  return status
}

const withServer = async <A>(url: string, f: (client: import("pg").Client) => Promise<A>): Promise<A> => {
  const { Client } = await import("pg")
  const client = new Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** The application's listening backends on this database (what `peers` reads too). */
const LISTENERS = `from pg_stat_activity where datname = current_database()
  and application_name like 'ai-visibility/%' and query like 'LISTEN %'`

const revoke = async (app: TestApp, cookie: string, id: string) =>
  expect((await app.fetch(`/api/v1/me/api-keys/${id}/revoke`, { method: "POST", headers: { cookie } })).status).toBe(200)

/**
 * Once every process listens again, a revoke reaches the other app through the channel within a
 * second: its cache is trusted again, and invalidated as before.
 */
const heardAgain = async (a: TestApp, b: TestApp, cookie: string) => {
  const again = await createKey(a, cookie, "after")
  const status = () => b.fetch("/api/public/v1/brands", { headers: bearer(again.key) }).then((r) => r.status)
  expect(await status()).toBe(200)
  expect(await status()).toBe(200)
  await revoke(a, cookie, again.id)
  expect(await statusAfter(status, 200, 1_000)).toBe(401)
}

describe.skipIf(!serverUrl)("a LISTEN connection lost (PostgreSQL server)", () => {
  it("terminated backends: a key revoked and a brand added meanwhile are seen within seconds, and the process listens again", async () => {
    const url = await serverSchemaUrl(serverUrl!)
    const a = await makeTestApp("postgres", { serverUrl: url })
    const b = await makeTestApp("postgres", { serverUrl: url })
    try {
      const cookie = await signup(a, "failover@example.test")
      const { id, key } = await createKey(a, cookie)
      const keyStatus = () => b.fetch("/api/public/v1/brands", { headers: bearer(key) }).then((r) => r.status)
      const listed = async () => ((await json(await b.fetch("/api/public/v1/brands", { headers: bearer(key) }))) as { count: number }).count
      // B holds the key and the (empty) brand list in memory.
      expect(await listed()).toBe(0)
      expect(await listed()).toBe(0)

      const listening = await withServer(url, async (client) => (await client.query(`select count(*)::int as n ${LISTENERS}`)).rows[0].n)
      const killed = await withServer(url, async (client) =>
        (await client.query(`select pg_terminate_backend(pid) ${LISTENERS}`)).rowCount)
      expect(killed).toBe(listening)
      expect(killed).toBeGreaterThanOrEqual(2)

      await createBrand(a, cookie, "added")
      const count = async () => {
        const n = await listed()
        return n === 0 ? 200 : n
      }
      expect(await statusAfter(count, 200, 5_000)).toBe(1)
      await revoke(a, cookie, id)
      expect(await statusAfter(keyStatus, 200, 5_000)).toBe(401)
      await Bun.sleep(500)
      for (let i = 0; i < 10; i++) expect(await keyStatus()).toBe(401)

      // Every process listens again, on a new backend.
      const relistened = await statusAfter(
        () => withServer(url, async (client) => (await client.query(`select count(*)::int as n ${LISTENERS}`)).rows[0].n),
        0,
        10_000
      )
      expect(relistened).toBeGreaterThan(0)
      await Bun.sleep(500)
      await heardAgain(a, b, cookie)
    } finally {
      await a.dispose()
      await b.dispose()
    }
  }, 60_000)

  it("a LISTEN gone silent (the socket open, nothing through): the heartbeat finds it and the revoke holds", async () => {
    const target = new URL(serverUrl!)
    const proxy = await startPgProxy({ hostname: target.hostname, port: Number(target.port || 5432) })
    const url = proxy.url(await serverSchemaUrl(serverUrl!))
    const a = await makeTestApp("postgres", { serverUrl: url })
    const b = await makeTestApp("postgres", { serverUrl: url })
    try {
      const cookie = await signup(a, "silent@example.test")
      const { id, key } = await createKey(a, cookie)
      const keyStatus = () => b.fetch("/api/public/v1/brands", { headers: bearer(key) }).then((r) => r.status)
      expect(await keyStatus()).toBe(200)
      expect(await keyStatus()).toBe(200)

      expect(proxy.silenceListeners()).toBeGreaterThanOrEqual(2)
      await revoke(a, cookie, id)
      // The heartbeat's bound is 4 s, checked every 100 ms by each process on its own clock: every
      // process of B (two in the two-process mode) finds its silence within a moment of the first.
      expect(await statusAfter(keyStatus, 200, 10_000)).toBe(401)
      await Bun.sleep(1_000)
      for (let i = 0; i < 10; i++) expect(await keyStatus()).toBe(401)

      await Bun.sleep(1_000)
      await heardAgain(a, b, cookie)
    } finally {
      await a.dispose()
      await b.dispose()
      proxy.close()
    }
  }, 60_000)
})
