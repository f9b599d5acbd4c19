import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { monthStart } from "../../src/platform/Days.js"
import { databaseBackends, json, makeTestApp, type TestApp } from "../helpers/app.js"
import { buildRecord, drainUrl, ndjson, postBatch, postDrain, query, requestRecord, tenant, type Tenant, UA } from "./fixtures.js"

/**
 * The monthly server-log event cap (docs/decisions.md "Plans"): shared by both endpoints, stores what
 * fits, then 429, exact under concurrent deliveries. The usage is put near the cap with SQL.
 */
const STARTER_CAP = 100_000
const GROWTH_CAP = 1_000_000
const CAP_BODY = (used: number, cap: number) => `{"error":"monthly server-log event cap reached","monthly_used":${used},"monthly_cap":${cap}}`

for (const backend of databaseBackends()) {
  describe(`monthly cap on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    }, 60_000)
    afterAll(() => app.dispose())

    const accountOf = async (t: Tenant) =>
      (await query<{ id: number }>(app, `select account_id::int as id from users where email = $1`, [t.email]))[0]!.id

    const setUsed = async (t: Tenant, events: number) => {
      const id = await accountOf(t)
      await query(app, `
        insert into monthly_usage (account_id, month, events) values ($1, $2::date, $3)
        on conflict (account_id, month) do update set events = excluded.events`, [id, monthStart(new Date()), events])
    }
    const usedOf = async (t: Tenant) =>
      (await query<{ events: number }>(app, `select events::int as events from monthly_usage where account_id = $1 and month = $2::date`, [
        await accountOf(t),
        monthStart(new Date())
      ]))[0]?.events ?? 0
    const storedOf = async (t: Tenant) =>
      (await query<{ n: number }>(app, `
        select count(*)::int as n from crawler_hits h join brands b on b.id = h.brand_id where b.site_id = $1`, [t.siteId]))[0]!.n

    const hits = (n: number) => Array.from({ length: n }, (_, i) => ({ ua: UA.gptbot, path: `/p/${i}` }))

    it("a batch crossing the cap stores what fits, then 429 with the figures", async () => {
      const t = await tenant(app, "starter")
      await setUsed(t, STARTER_CAP - 2)
      const first = await postBatch(app, t.key, { site_id: t.siteId, records: hits(5) })
      expect(first.status).toBe(200)
      expect(await first.text()).toBe(`{"accepted":2,"monthly_used":${STARTER_CAP},"monthly_cap":${STARTER_CAP}}`)
      const second = await postBatch(app, t.key, { site_id: t.siteId, records: hits(1) })
      expect(second.status).toBe(429)
      expect(await second.text()).toBe(CAP_BODY(STARTER_CAP, STARTER_CAP))
      expect(await storedOf(t)).toBe(2)
    })

    it("the cap is shared by both endpoints: the drain answers 429 too (verify echoed)", async () => {
      const t = await tenant(app, "growth")
      await setUsed(t, GROWTH_CAP - 1)
      const batch = await postBatch(app, t.key, { site_id: t.siteId, records: hits(1) })
      expect(((await json(batch)) as { monthly_used: number }).monthly_used).toBe(GROWTH_CAP)
      const drain = await postDrain(app, t.key, drainUrl(t.siteId, "&verify=abc"), ndjson([requestRecord({ ua: UA.claudebot })]))
      expect(drain.status).toBe(429)
      expect(drain.headers.get("x-drain-verify")).toBe("abc")
      expect(await drain.text()).toBe(CAP_BODY(GROWTH_CAP, GROWTH_CAP))
    })

    it("at the cap, a delivery without crawler hits still answers 200", async () => {
      const t = await tenant(app, "growth")
      await setUsed(t, GROWTH_CAP)
      const drain = await postDrain(app, t.key, drainUrl(t.siteId), ndjson([buildRecord(), requestRecord({ ua: UA.chrome })]))
      expect(drain.status).toBe(200)
      expect(await json(drain)).toEqual({ accepted: 0, scanned: 2, skipped: 2, monthly_used: GROWTH_CAP, monthly_cap: GROWTH_CAP })
    })

    it("two deliveries racing at the cap do not both pass", async () => {
      const t = await tenant(app, "growth")
      await setUsed(t, GROWTH_CAP - 1)
      const [a, b] = await Promise.all([
        postDrain(app, t.key, drainUrl(t.siteId), ndjson([requestRecord({ ua: UA.gptbot })])),
        postBatch(app, t.key, { site_id: t.siteId, records: hits(1) })
      ])
      expect([a.status, b.status].sort()).toEqual([200, 429])
      expect(await usedOf(t)).toBe(GROWTH_CAP)
      expect(await storedOf(t)).toBe(1)
    })

    it("twenty concurrent deliveries of 3 hits with room for 10: exactly 10 stored", async () => {
      const t = await tenant(app, "growth")
      await setUsed(t, GROWTH_CAP - 10)
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? postDrain(app, t.key, drainUrl(t.siteId), ndjson([0, 1, 2].map(() => requestRecord({ ua: UA.perplexitybot }))))
            : postBatch(app, t.key, { site_id: t.siteId, records: hits(3) }))
      )
      let accepted = 0
      for (const response of responses) {
        expect([200, 429]).toContain(response.status)
        const body = (await json(response)) as { accepted?: number; monthly_used: number }
        expect(body.monthly_used).toBeLessThanOrEqual(GROWTH_CAP)
        accepted += body.accepted ?? 0
      }
      expect(accepted).toBe(10)
      expect(await usedOf(t)).toBe(GROWTH_CAP)
      expect(await storedOf(t)).toBe(10)
    })

    it("forty concurrent deliveries of 5 hits with room for 100: exactly 100 stored, rollups match", async () => {
      // Most fit, so they race on the optimistic path; the ones that find the room taken are
      // rolled back whole (hits and rollups) and stored again under the lock, up to the room.
      const t = await tenant(app, "growth")
      await setUsed(t, GROWTH_CAP - 100)
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          postBatch(app, t.key, {
            site_id: t.siteId,
            records: Array.from({ length: 5 }, (_, j) => ({ ua: UA.gptbot, path: `/race/${i}/${j}` }))
          }))
      )
      let accepted = 0
      for (const response of responses) {
        expect([200, 429]).toContain(response.status)
        accepted += ((await json(response)) as { accepted?: number }).accepted ?? 0
      }
      expect(accepted).toBe(100)
      expect(await usedOf(t)).toBe(GROWTH_CAP)
      expect(await storedOf(t)).toBe(100)
      const rolled = await query<{ n: number }>(app, `
        select coalesce(sum(hits), 0)::int as n from crawler_daily_exact d join brands b on b.id = d.brand_id where b.site_id = $1`, [t.siteId])
      expect(rolled[0]!.n).toBe(100)
    })

    it("usage is per calendar month (UTC) and per account", async () => {
      const t = await tenant(app, "growth")
      const other = await tenant(app, "growth")
      await setUsed(other, GROWTH_CAP)
      const response = await postBatch(app, t.key, { site_id: t.siteId, records: hits(2) })
      expect(await json(response)).toEqual({ accepted: 2, monthly_used: 2, monthly_cap: GROWTH_CAP })
      const rows = await query<{ month: string }>(app, `
        select to_char(month, 'YYYY-MM-DD') as month from monthly_usage where account_id = $1`, [await accountOf(t)])
      expect(rows).toEqual([{ month: monthStart(new Date()) }])
    })
  })
}
