import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { SqlError } from "@effect/sql/SqlError"
import { Deferred, Duration, Effect, Exit } from "effect"
import { mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monthStart } from "../../src/platform/Days.js"
import { ingestionConfigTest } from "../../src/ingestion/Config.js"
import { INVALIDATION_CHANNEL, Invalidations } from "../../src/platform/Invalidations.js"
import { Database } from "../../src/platform/Sql.js"
import { decodeDelivery, encodeDelivery, Spool, SpoolLive } from "../../src/ingestion/Spool.js"
import { databaseBackends, json, makeTestApp, type TestApp } from "../helpers/app.js"
import { gatedSql } from "../helpers/gatedSql.js"
import { array, buildRecord, drainUrl, gzip, MIXED, mixedDelivery, ndjson, postDrain, query, requestRecord, tenant, type Tenant, UA } from "./fixtures.js"

/**
 * Nothing lost: while the database is down the drain answers 200 and spools
 * each delivery (fsynced before answering); once it is back, the background replay stores every
 * hit exactly once, counted against the cap like live traffic.
 *
 * The outage: the repositories' SqlClient is wrapped so that every statement fails while `down`.
 */
const gate = { down: false }
const OUTAGE = () => new SqlError({ cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }), message: "Connection refused" })

const check = Effect.suspend(() => (gate.down ? Effect.fail(OUTAGE()) : Effect.void))
const wrapSql = gatedSql(check)

const waitFor = async (what: string, done: () => Promise<boolean>, ms = 15_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await done()) return
    await Bun.sleep(25)
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe("spool file format", () => {
  it("a delivery survives the round trip byte for byte", async () => {
    const body = gzip(ndjson(mixedDelivery()))
    const delivery = { id: crypto.randomUUID(), receivedAt: Date.now(), accountId: 7, siteId: crypto.randomUUID(), signature: "ab".repeat(20), body }
    expect(decodeDelivery(encodeDelivery(delivery))).toEqual(delivery)
    expect(decodeDelivery(new Uint8Array([1, 2, 3]))).toBeNull()
  })

  it("append is durable and ordered; pending lists oldest first; remove deletes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aiv-spool-test-"))
    const names = await Effect.runPromise(
      Effect.gen(function*() {
        const spool = yield* Spool
        for (const receivedAt of [3000, 1000, 2000]) {
          yield* spool.append({ id: `d${receivedAt}`, receivedAt, accountId: 1, siteId: "s", signature: null, body: new Uint8Array([receivedAt % 251]) })
        }
        const pending = yield* spool.pending
        const first = yield* spool.read(pending[0]!)
        yield* spool.remove(pending[0]!)
        return { pending, first, after: yield* spool.pending }
      }).pipe(Effect.provide(SpoolLive), Effect.provide(ingestionConfigTest({ spoolDir: dir })))
    )
    expect(names.pending.length).toBe(3)
    expect(names.first?.id).toBe("d1000")
    expect(names.after.length).toBe(2)
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([])
  })
})

/**
 * Returns once the app's invalidation channel has handed it every notification committed before the
 * call: a marker of its own comes back through it, and notifications arrive in commit order.
 */
const channelCaughtUp = (app: TestApp) =>
  app.runServices(Effect.gen(function*() {
    const invalidations = yield* Invalidations
    const database = yield* Database
    const marker = `test-caught-up:${crypto.randomUUID()}`
    const heard = yield* Deferred.make<void>()
    invalidations.register({ prefix: marker, onPayload: () => Deferred.unsafeDone(heard, Exit.void), onLive: () => {} })
    yield* database.notify(INVALIDATION_CHANNEL, marker).pipe(Effect.orDie)
    yield* Deferred.await(heard).pipe(Effect.timeout(Duration.seconds(15)), Effect.orDie)
  }))

/**
 * A growth tenant whose sign-up, key, brand and plan change (made in SQL) this process has heard
 * of: their notifications are asynchronous, and one landing after the warm-up would empty the
 * caches the outage needs. Seeing the new plan is not enough: the plan cache may already have been
 * emptied by an earlier notification, so the new plan can be read before its own notification lands.
 */
const settledTenant = async (app: TestApp): Promise<Tenant> => {
  const t = await tenant(app, "growth")
  await channelCaughtUp(app)
  const response = await app.fetch("/api/public/v1/brands", { headers: { authorization: `Bearer ${t.key}` } })
  expect(((await json(response)) as { limit: number }).limit).toBeGreaterThan(1)
  return t
}

for (const backend of databaseBackends()) {
  describe(`database outage on ${backend}`, () => {
    let app: TestApp
    let spoolDir: string
    const spooled = () => readdirSync(spoolDir).filter((f) => f.endsWith(".dlv"))

    beforeAll(async () => {
      gate.down = false
      spoolDir = mkdtempSync(join(tmpdir(), "aiv-spool-test-"))
      app = await makeTestApp(backend, {
        wrapSql,
        ingest: { spoolDir, spoolRetryMinMs: 20, spoolRetryMaxMs: 200, spoolPollMs: 100 }
      })
    }, 60_000)
    afterAll(async () => {
      gate.down = false
      await app.dispose()
    })

    const storedOf = async (t: Tenant) =>
      (await query<{ n: number }>(app, `
        select count(*)::int as n from crawler_hits h join brands b on b.id = h.brand_id where b.site_id = $1`, [t.siteId]))[0]!.n
    const rollupOf = async (t: Tenant) =>
      (await query<{ n: number }>(app, `
        select coalesce(sum(hits), 0)::int as n from crawler_rollup_exact r join brands b on b.id = r.brand_id where b.site_id = $1`, [t.siteId]))[0]!.n
    const usedOf = async (t: Tenant) =>
      (await query<{ n: number }>(app, `
        select coalesce(sum(m.events), 0)::int as n from monthly_usage m join users u on u.account_id = m.account_id
        where u.email = $1`, [t.email]))[0]!.n

    it("answers 200 while down, then stores every hit exactly once", async () => {
      const t = await settledTenant(app)
      // One delivery stored while up (its key is cached from then on, as in a running server).
      const early = ndjson(mixedDelivery())
      const up = await postDrain(app, t.key, drainUrl(t.siteId), early)
      expect(((await json(up)) as { accepted: number }).accepted).toBe(MIXED.hits)

      gate.down = true
      const bodies: ReadonlyArray<string | Uint8Array> = [
        gzip(ndjson(mixedDelivery())),
        array(mixedDelivery()),
        early, // a platform redelivery of records already stored
        ndjson([buildRecord()]) // nothing to store: not spooled
      ]
      const sameTwice = gzip(ndjson([requestRecord({ ua: UA.gptbot, path: "/twice" })]))
      for (const body of [...bodies, sameTwice, sameTwice]) {
        const response = await postDrain(app, t.key, drainUrl(t.siteId, "&verify=x"), body)
        expect(response.status).toBe(200)
        expect(response.headers.get("x-drain-verify")).toBe("x")
        const out = (await json(response)) as { accepted: number; scanned: number }
        expect(out.accepted).toBe(0)
        expect(out.scanned).toBeGreaterThan(0)
      }
      // Durable before the answer: the files are there, while the database is still down.
      expect(spooled().length).toBe(5)
      await Bun.sleep(150) // the replay retries and backs off meanwhile
      expect(spooled().length).toBe(5)

      gate.down = false
      await waitFor("the spool to empty", async () => spooled().length === 0)
      const expected = MIXED.hits * 3 + 1 // early, the gzip and the array deliveries, /twice once
      expect(await storedOf(t)).toBe(expected)
      expect(await rollupOf(t)).toBe(expected)
      expect(await usedOf(t)).toBe(expected)
      expect(readdirSync(join(spoolDir, "failed"))).toEqual([])
    })

    it("replays count against the cap like live traffic", async () => {
      const t = await settledTenant(app)
      const id = (await query<{ id: number }>(app, `select account_id::int as id from users where email = $1`, [t.email]))[0]!.id
      await postDrain(app, t.key, drainUrl(t.siteId), ndjson([buildRecord()])) // caches the key
      await query(app, `insert into monthly_usage (account_id, month, events) values ($1, $2::date, $3)`, [id, monthStart(new Date()), 1_000_000 - 2])
      gate.down = true
      const response = await postDrain(app, t.key, drainUrl(t.siteId), ndjson(mixedDelivery()))
      expect(response.status).toBe(200)
      gate.down = false
      await waitFor("the spool to empty", async () => spooled().length === 0)
      expect(await storedOf(t)).toBe(2)
      expect(await usedOf(t)).toBe(1_000_000)
    })

    it("a delivery checked on replay is dropped if the site is not the account's", async () => {
      const t = await settledTenant(app)
      const other = await settledTenant(app)
      await postDrain(app, t.key, drainUrl(t.siteId), ndjson([buildRecord()]))
      gate.down = true
      const response = await postDrain(app, t.key, drainUrl(other.siteId), ndjson(mixedDelivery()))
      expect(response.status).toBe(200) // cannot be checked while the database is down
      gate.down = false
      await waitFor("the spool to empty", async () => spooled().length === 0)
      expect(await storedOf(other)).toBe(0)
      expect(await storedOf(t)).toBe(0)
    })
  })
}
