import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Client } from "pg"
import { brandOver, drainBody, freePort, keyOver, type RunningServer, signupOver, startServer } from "./server.js"

/**
 * Two server processes on one PostgreSQL database and one Redis: a key revoked through
 * one is refused by the other on its next request; the monthly cap is exact across both under
 * concurrent deliveries; a per-key rate limit counts the requests of both.
 *
 * Needs TEST_DATABASE_URL (a fresh database is created on its server and dropped after). Redis:
 * REDIS_URL, else a redis-server started here on a free port (the Redis part is skipped when neither).
 */
const base = process.env.TEST_DATABASE_URL
describe.skipIf(!base)("two server processes, one database", () => {
  const dbName = `aiv_two_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  let databaseUrl: string
  let redisUrl: string | undefined = process.env.REDIS_URL || undefined
  let ownRedis: ReturnType<typeof Bun.spawn> | undefined
  let a: RunningServer
  let b: RunningServer
  let cookie: string
  let siteId: string
  const admin = () => {
    const url = new URL(base!)
    url.pathname = "/postgres"
    return new Client({ connectionString: url.toString() })
  }
  const sql = async (text: string, params: Array<unknown> = []) => {
    const client = new Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      return (await client.query(text, params)).rows
    } finally {
      await client.end()
    }
  }

  beforeAll(async () => {
    const client = admin()
    await client.connect()
    await client.query(`create database ${dbName}`)
    await client.end()
    const url = new URL(base!)
    url.pathname = `/${dbName}`
    databaseUrl = url.toString()
    if (redisUrl === undefined && Bun.which("redis-server") !== null) {
      const port = freePort()
      ownRedis = Bun.spawn(["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
        stdout: "ignore",
        stderr: "ignore"
      })
      redisUrl = `redis://127.0.0.1:${port}`
      await Bun.sleep(300)
    }
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      DATA_DIR: "memory://",
      RATE_LIMIT_API_KEY: "30/3600",
      RATE_LIMIT_API_IP: "off",
      // The rate limit alone is counted here: parallel batches of one key stay under no in-flight bound.
      CONCURRENT_READS_PER_KEY: "0",
      REDIS_PREFIX: `aiv-test-${dbName}:`,
      LOG_REQUESTS: "false",
      ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl })
    }
    // The first applies the migrations; then the second starts on the same database.
    a = await startServer(env)
    b = await startServer(env)
    cookie = await signupOver(a.base, "two@example.test")
    siteId = (await brandOver(a.base, cookie, "acme")).site_id
    await sql(`update accounts set plan_id = 'growth'`)
  }, 120_000)

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    ownRedis?.kill()
    const client = admin()
    await client.connect()
    await client.query(`drop database if exists ${dbName} with (force)`)
    await client.end()
  })

  const brands = (server: RunningServer, key: string) =>
    fetch(`${server.base}/api/public/v1/brands`, { headers: { authorization: `Bearer ${key}` } })

  it("a key revoked through one process is refused by the other on its very next request", async () => {
    // Both processes have the key in their cache; the revoke answers once the other has dropped it.
    // The other process is kept busy meanwhile (its notification waits behind other requests).
    // Repeated, alternating which process revokes: not one stale answer.
    for (let round = 0; round < 20; round++) {
      const [revoker, other] = round % 2 === 0 ? [a, b] : [b, a]
      const { id, key } = await keyOver(revoker.base, cookie, `revocation ${round}`)
      expect((await brands(a, key)).status).toBe(200)
      expect((await brands(b, key)).status).toBe(200)
      const load = Promise.all(Array.from({ length: 40 }, (_, i) => brands(other, `aivkey_busy-${round}-${i}`).then((r) => r.arrayBuffer())))
      // A cookie-authenticated change names its origin, as a browser does (docs/security.md).
      const revoke = await fetch(`${revoker.base}/api/v1/me/api-keys/${id}/revoke`, { method: "POST", headers: { cookie, origin: revoker.base } })
      expect(revoke.status).toBe(200)
      expect((await brands(other, key)).status).toBe(401)
      expect((await brands(revoker, key)).status).toBe(401)
      await load
    }
  }, 60_000)

  it("the monthly cap is exact across both processes under concurrent deliveries", async () => {
    await sql(`update plans set monthly_events = 250 where id = 'growth'`)
    const { key } = await keyOver(b.base, cookie, "cap")
    // 16 deliveries of 20 hits (320) at once, alternating between the processes: exactly 250 stored.
    const answers = await Promise.all(Array.from({ length: 16 }, async (_, i) => {
      const server = i % 2 === 0 ? a : b
      const response = await fetch(`${server.base}/api/public/v1/agents/ingest/drain?site_id=${siteId}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: drainBody(`cap${i}`, 20)
      })
      return { status: response.status, body: (await response.json()) as { accepted?: number; monthly_used: number } }
    }))
    const accepted = answers.reduce((sum, a) => sum + (a.body.accepted ?? 0), 0)
    expect(accepted).toBe(250)
    const [{ n }] = await sql(`select count(*)::int as n from crawler_hits`)
    expect(n).toBe(250)
    const [{ events }] = await sql(`select events::int as events from monthly_usage`)
    expect(events).toBe(250)
    for (const answer of answers) expect([200, 429]).toContain(answer.status)
    expect(answers.some((x) => x.status === 429)).toBe(true)
  })

  it("a per-key rate limit counts the requests of both processes (Redis)", async () => {
    if (redisUrl === undefined) return console.warn("no REDIS_URL and no redis-server: rate-limit part skipped")
    const { key } = await keyOver(a.base, cookie, "limited")
    const statuses: Array<number> = []
    // 30 per hour per key: the 40 requests alternate between the processes, in parallel batches.
    for (let round = 0; round < 4; round++) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, i) => brands(i % 2 === 0 ? a : b, key)))
      for (const response of batch) {
        statuses.push(response.status)
        if (response.status === 429) expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
        await response.arrayBuffer()
      }
    }
    expect(statuses.filter((s) => s === 200).length).toBe(30)
    expect(statuses.filter((s) => s === 429).length).toBe(10)
  })
})
