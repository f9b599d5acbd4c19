import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect, Layer } from "effect"
import { createHmac } from "node:crypto"
import { readFileSync } from "node:fs"
import { monthStart } from "../../src/platform/Days.js"
import { postPinned } from "../../src/webhooks/Sender.js"
import { AddressResolver, pinnedTarget, UnresolvableHost } from "../../src/webhooks/Ssrf.js"
import { createBrand, databaseBackends, json, makeTestApp, serverSchemaUrl, signup, type TestApp } from "../helpers/app.js"
import { drainUrl, ndjson, postBatch, postDrain, query, requestRecord, setPlan, tenant, UA } from "../ingestion/fixtures.js"
import { sourceBody, sourceRecords } from "../ingestion/sources.js"

/**
 * Webhooks and alerts through the HTTP surface (docs/webhooks.md): a local receiver (Bun.serve)
 * records every request; signatures are checked with an implementation of the Standard Webhooks
 * convention written here from the convention, not imported from the app.
 */

interface Received {
  readonly path: string
  readonly id: string
  readonly timestamp: string
  readonly signature: string
  readonly body: string
}

/** Standard Webhooks: base64 HMAC-SHA256 keyed by the decoded secret of "id.timestamp.body". */
const expectedSignature = (secret: string, id: string, timestamp: string, body: string) =>
  createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64")).update(`${id}.${timestamp}.${body}`).digest("base64")

const verifies = (secret: string, r: Received) =>
  r.signature.split(" ").some((part) => part === `v1,${expectedSignature(secret, r.id, r.timestamp, r.body)}`)

const startReceiver = () => {
  const received: Array<Received> = []
  const failuresLeft = new Map<string, number>()
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      const url = new URL(request.url)
      const r: Received = {
        path: url.pathname,
        id: request.headers.get("webhook-id") ?? "",
        timestamp: request.headers.get("webhook-timestamp") ?? "",
        signature: request.headers.get("webhook-signature") ?? "",
        body: await request.text()
      }
      received.push(r)
      if (url.pathname === "/fail") return new Response("no", { status: 500 })
      const flaky = /^\/flaky\/(\d+)$/.exec(url.pathname)
      if (flaky !== null) {
        const left = failuresLeft.get(r.id) ?? Number(flaky[1])
        failuresLeft.set(r.id, left - 1)
        if (left > 0) return new Response("later", { status: 503 })
      }
      return new Response("ok")
    }
  })
  return { received, base: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

const waitFor = async <A>(what: string, probe: () => Promise<A | undefined> | A | undefined, ms = 15_000): Promise<A> => {
  const until = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

const ALL_EVENTS = ["crawler.new_bot", "ingestion.quota", "ingestion.stalled", "visibility.changed", "citation.gained", "citation.lost"]

for (const backend of databaseBackends()) {
  describe(`webhooks on ${backend}`, () => {
    let app: TestApp
    let receiver: ReturnType<typeof startReceiver>
    let cookie: string
    let other: string
    beforeAll(async () => {
      receiver = startReceiver()
      app = await makeTestApp(backend, {
        // Many test pings from one account here (20 at once below): a limit above them.
        webhooks: {
          allowPrivate: true, retrySchedule: [0, 0], pollMs: 100, stallHours: 0.0005, checkEveryMs: 1_000, spoofedMin: 3,
          testLimit: { limit: 100, windowSeconds: 60 }
        }
      })
      cookie = await signup(app, `hooks-${backend}@example.test`)
      other = await signup(app, `other-${backend}@example.test`)
    }, 120_000)
    afterAll(async () => {
      await app.dispose()
      receiver.stop()
    })

    const call = (path: string, method = "GET", body?: unknown, as = cookie) =>
      app.fetch(path, {
        method,
        headers: { cookie: as, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const create = async (path: string, events: ReadonlyArray<string> = ["crawler.new_bot"], as = cookie) => {
      const response = await call("/api/v1/me/webhooks", "POST", { url: `${receiver.base}${path}`, events, description: "test" }, as)
      expect(response.status).toBe(201)
      return (await json(response)) as { id: string; secret: string; url: string; events: Array<string>; enabled: boolean }
    }
    const deliveries = async (id: string, as = cookie) =>
      ((await json(await call(`/api/v1/me/webhooks/${id}/deliveries`, "GET", undefined, as))) as {
        deliveries: Array<{ id: string; event_id: string; type: string; status: string; attempts: number; response_status: number | null }>
      }).deliveries
    const eventsOf = async (as: string) =>
      ((await json(await call("/api/v1/me/webhook-events", "GET", undefined, as))) as {
        events: Array<{ id: string; type: string; data: Record<string, unknown> }>
      }).events
    const to = (path: string) => receiver.received.filter((r) => r.path === path)

    it("creates an endpoint: 201 with the secret once (whsec_ + base64 of 32 bytes), listed without it", async () => {
      const created = await create("/created", ["crawler.new_bot", "ingestion.quota"])
      expect(Object.keys(created).sort()).toEqual(
        ["created_at", "description", "disabled_reason", "enabled", "events", "failing_since", "id", "secret", "url"]
      )
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
      expect(Buffer.from(created.secret.slice(6), "base64").length).toBe(32)
      expect(created.enabled).toBe(true)
      expect(created.url).toBe(`${receiver.base}/created`)
      const list = (await json(await call("/api/v1/me/webhooks"))) as { webhooks: Array<Record<string, unknown>>; count: number }
      expect(list.count).toBe(list.webhooks.length)
      const listed = list.webhooks.find((w) => w.id === created.id)!
      expect(listed.secret).toBeUndefined()
      expect(listed.events).toEqual(["crawler.new_bot", "ingestion.quota"])
    })

    it("400 for a bad URL or an unknown event type; PATCH checks them too", async () => {
      for (const body of [
        { url: "not a url", events: ["crawler.new_bot"] },
        { url: "ftp://example.com/x", events: ["crawler.new_bot"] },
        { url: `${receiver.base}/x`, events: ["crawler.nope"] },
        { url: `${receiver.base}/x`, events: [] }
      ]) {
        const response = await call("/api/v1/me/webhooks", "POST", body)
        expect(response.status).toBe(400)
        expect(typeof ((await json(response)) as { error: string }).error).toBe("string")
      }
      const created = await create("/patched")
      expect((await call(`/api/v1/me/webhooks/${created.id}`, "PATCH", { events: ["bogus"] })).status).toBe(400)
      expect((await call(`/api/v1/me/webhooks/${created.id}`, "PATCH", { url: "gopher://x" })).status).toBe(400)
      const patched = await call(`/api/v1/me/webhooks/${created.id}`, "PATCH", { events: ["visibility.changed"], description: "new", enabled: false })
      expect(patched.status).toBe(200)
      expect(await json(patched)).toMatchObject({ id: created.id, events: ["visibility.changed"], description: "new", enabled: false })
    })

    it("another account's ids answer 404 on every endpoint; DELETE answers 204", async () => {
      const created = await create("/mine")
      const paths: Array<[string, string, unknown?]> = [
        [`/api/v1/me/webhooks/${created.id}`, "PATCH", { description: "x" }],
        [`/api/v1/me/webhooks/${created.id}/test`, "POST"],
        [`/api/v1/me/webhooks/${created.id}/rotate-secret`, "POST"],
        [`/api/v1/me/webhooks/${created.id}/deliveries`, "GET"],
        [`/api/v1/me/webhooks/${created.id}/deliveries/${crypto.randomUUID()}/retry`, "POST"],
        [`/api/v1/me/webhooks/${created.id}`, "DELETE"]
      ]
      for (const [path, method, body] of paths) {
        const response = await call(path, method, body, other)
        expect(response.status).toBe(404)
      }
      expect((await json(await call("/api/v1/me/webhooks", "GET", undefined, other))) as unknown).toEqual({ webhooks: [], count: 0 })
      expect((await call(`/api/v1/me/webhooks/${created.id}`, "DELETE")).status).toBe(204)
      expect((await call(`/api/v1/me/webhooks/${created.id}`, "DELETE")).status).toBe(404)
      expect((await call("/api/v1/me/webhooks")).status).toBe(200)
      expect((await app.fetch("/api/v1/me/webhooks")).status).toBe(401)
    })

    it("test sends a signed ping (verified independently), recorded as delivered", async () => {
      const created = await create("/ping", ["crawler.new_bot"])
      expect((await call(`/api/v1/me/webhooks/${created.id}/test`, "POST")).status).toBe(202)
      const ping = await waitFor("the ping", () => to("/ping")[0])
      expect(verifies(created.secret, ping)).toBe(true)
      expect(ping.signature.split(" ")).toHaveLength(1)
      expect(ping.id).toMatch(/^msg_/)
      expect(Math.abs(Number(ping.timestamp) - Date.now() / 1000)).toBeLessThan(60)
      const body = JSON.parse(ping.body) as { type: string; timestamp: string; data: unknown }
      expect(body.type).toBe("ping")
      expect(body.data).toEqual({ webhook_id: created.id })
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp)
      const [delivery] = await waitFor("delivered", async () => {
        const list = await deliveries(created.id)
        return list[0]?.status === "delivered" ? list : undefined
      })
      expect(delivery).toMatchObject({ event_id: ping.id, type: "ping", status: "delivered", attempts: 1, response_status: 200 })
    })

    it("retries with the same webhook-id until a 2xx; fails after the schedule; a manual retry sends the same event", async () => {
      const flaky = await create("/flaky/2")
      await call(`/api/v1/me/webhooks/${flaky.id}/test`, "POST")
      await waitFor("three attempts", () => (to("/flaky/2").length >= 3 ? true : undefined))
      const attempts = to("/flaky/2")
      expect(new Set(attempts.map((a) => a.id)).size).toBe(1)
      expect(attempts.every((a) => verifies(flaky.secret, a))).toBe(true)
      const done = await waitFor("delivered", async () => {
        const list = await deliveries(flaky.id)
        return list[0]?.status === "delivered" ? list[0] : undefined
      })
      expect(done).toMatchObject({ attempts: 3, response_status: 200 })

      const failing = await create("/fail")
      await call(`/api/v1/me/webhooks/${failing.id}/test`, "POST")
      const failed = await waitFor("failed", async () => {
        const list = await deliveries(failing.id)
        return list[0]?.status === "failed" ? list[0] : undefined
      })
      // Two waits: three attempts.
      expect(failed).toMatchObject({ attempts: 3, response_status: 500 })
      expect(to("/fail")).toHaveLength(3)
      const retry = await call(`/api/v1/me/webhooks/${failing.id}/deliveries/${failed.id}/retry`, "POST")
      expect(retry.status).toBe(202)
      await waitFor("the manual retry", () => (to("/fail").length >= 4 ? true : undefined))
      expect(new Set(to("/fail").map((a) => a.id))).toEqual(new Set([failed.event_id]))
      expect((await call(`/api/v1/me/webhooks/${failing.id}/deliveries/${crypto.randomUUID()}/retry`, "POST")).status).toBe(404)
    })

    it("rotation: a new secret, and for 24 h two signatures (new and old)", async () => {
      const created = await create("/rotated")
      const rotated = await call(`/api/v1/me/webhooks/${created.id}/rotate-secret`, "POST")
      expect(rotated.status).toBe(200)
      const answer = (await json(rotated)) as { secret: string }
      expect(Object.keys(answer)).toEqual(["secret"])
      expect(answer.secret).toMatch(/^whsec_/)
      expect(answer.secret).not.toBe(created.secret)
      await call(`/api/v1/me/webhooks/${created.id}/test`, "POST")
      const ping = await waitFor("the ping", () => to("/rotated")[0])
      const parts = ping.signature.split(" ")
      expect(parts).toHaveLength(2)
      expect(parts[0]).toBe(`v1,${expectedSignature(answer.secret, ping.id, ping.timestamp, ping.body)}`)
      expect(parts[1]).toBe(`v1,${expectedSignature(created.secret, ping.id, ping.timestamp, ping.body)}`)
    })

    it("a first GPTBot hit sends one crawler.new_bot; a second one nothing", async () => {
      const t = await tenant(app, "starter")
      const hook = await create("/newbot", ["crawler.new_bot"], t.cookie)
      const first = await postBatch(app, t.key, { site_id: t.siteId, records: [{ ua: UA.gptbot, path: "/pricing" }, { ua: UA.gptbot, path: "/docs" }] })
      expect(first.status).toBe(200)
      await postBatch(app, t.key, { site_id: t.siteId, records: [{ ua: UA.gptbot, path: "/again" }] })
      const sent = await waitFor("crawler.new_bot", () => to("/newbot")[0])
      expect(verifies(hook.secret, sent)).toBe(true)
      const body = JSON.parse(sent.body) as { type: string; data: Record<string, unknown> }
      expect(body.type).toBe("crawler.new_bot")
      expect(body.data).toMatchObject({ brand_slug: t.brandSlug, bot: "GPTBot", vendor: "OpenAI", path: "/pricing" })
      expect(Object.keys(body.data).sort()).toEqual(["bot", "brand_slug", "first_seen", "kind", "path", "vendor"])
      await Bun.sleep(500)
      expect(to("/newbot")).toHaveLength(1)
      expect((await eventsOf(t.cookie)).filter((e) => e.type === "crawler.new_bot")).toHaveLength(1)
    })

    it("crossing 80% of a starter cap sends one ingestion.quota; 100% one more", async () => {
      const t = await tenant(app, "starter")
      await create("/quota", ["ingestion.quota"], t.cookie)
      const accountId = (await query<{ id: number }>(app, "select account_id::int as id from users where email = $1", [t.email]))[0]!.id
      await query(app, `insert into monthly_usage (account_id, month, events) values ($1, $2::date, 79999)
        on conflict (account_id, month) do update set events = excluded.events`, [accountId, monthStart(new Date())])
      await postBatch(app, t.key, { site_id: t.siteId, records: [{ ua: UA.gptbot, path: "/a" }] })
      await postBatch(app, t.key, { site_id: t.siteId, records: [{ ua: UA.gptbot, path: "/b" }] })
      const first = await waitFor("ingestion.quota", () => to("/quota")[0])
      expect(JSON.parse(first.body).data).toEqual({ monthly_used: 80000, monthly_cap: 100000, threshold: 0.8 })
      await query(app, "update monthly_usage set events = 99999 where account_id = $1", [accountId])
      await postBatch(app, t.key, { site_id: t.siteId, records: [{ ua: UA.gptbot, path: "/c" }, { ua: UA.gptbot, path: "/d" }] })
      await waitFor("the second", () => (to("/quota").length >= 2 ? true : undefined))
      await Bun.sleep(500)
      expect(to("/quota").map((r) => JSON.parse(r.body).data.threshold)).toEqual([0.8, 1])
    })

    const observation = (at: Date, i: number, mentioned: boolean, citation: string) => ({
      prompt: "best crm for startups",
      engine: "perplexity",
      region: "US",
      language: "en",
      observed_at: new Date(at.getTime() + i * 1000).toISOString(),
      response: mentioned ? `VISCO is an excellent CRM. Number ${i}.` : `Other tools are fine. Number ${i}.`,
      citations: [citation]
    })
    const importObservations = (as: string, slug: string, rows: ReadonlyArray<unknown>) =>
      app.fetch(`/api/v1/me/brands/${slug}/observations`, { method: "POST", headers: { cookie: as, "content-type": "application/json" }, body: JSON.stringify(rows) })

    it("an import moving the mention rate significantly sends visibility.changed (and citation.gained); a flat one nothing", async () => {
      const owner = await signup(app, `vis-${backend}@example.test`)
      await setPlan(app, `vis-${backend}@example.test`, "growth")
      await createBrand(app, owner, "visco")
      await createBrand(app, owner, "flat", { brand_name: "VISCO" })
      const hook = await create("/visibility", ["visibility.changed", "citation.gained"], owner)
      const day = 86_400_000
      const before = new Date(Date.now() - 10 * day)
      const recent = new Date(Date.now() - 2 * day)
      const previous = Array.from({ length: 40 }, (_, i) => observation(before, i, i < 4, "https://reddit.com/r/crm"))
      expect((await importObservations(owner, "visco", previous)).status).toBe(200)
      const current = Array.from({ length: 40 }, (_, i) => observation(recent, i, i < 36, i < 36 ? "https://visco.com/pricing" : "https://reddit.com/r/crm"))
      expect((await importObservations(owner, "visco", current)).status).toBe(200)
      // The flat brand: the same rate in both weeks.
      expect((await importObservations(owner, "flat", Array.from({ length: 40 }, (_, i) => observation(before, i, i % 2 === 0, "https://g2.com/x")))).status).toBe(200)
      expect((await importObservations(owner, "flat", Array.from({ length: 40 }, (_, i) => observation(recent, i, i % 2 === 0, "https://g2.com/x")))).status).toBe(200)

      await waitFor("visibility.changed", () => (to("/visibility").length >= 3 ? true : undefined))
      await Bun.sleep(500)
      const bodies = to("/visibility").map((r) => {
        expect(verifies(hook.secret, r)).toBe(true)
        return JSON.parse(r.body) as { type: string; data: Record<string, unknown> }
      })
      const changed = bodies.filter((b) => b.type === "visibility.changed")
      // Overall and per engine (one engine here), for the moving brand only.
      expect(changed.map((b) => b.data.engine).sort()).toEqual([null, "perplexity"].sort())
      for (const b of changed) {
        expect(b.data).toMatchObject({ brand_slug: "visco", previous: 0.1, current: 0.9, delta: 0.8 })
        const ci = b.data.delta_ci95 as [number, number]
        expect(ci[0]).toBeGreaterThan(0)
        expect(ci[1]).toBeLessThan(1)
      }
      const gained = bodies.filter((b) => b.type === "citation.gained")
      expect(gained.map((b) => b.data)).toEqual([{ brand_slug: "visco", domain: "visco.com", engine: "perplexity" }])
      expect(bodies.some((b) => b.data.brand_slug === "flat")).toBe(false)
    })

    it("citation.lost: cited in the 28 days before the last 7, not since", async () => {
      const owner = await signup(app, `lost-${backend}@example.test`)
      await createBrand(app, owner, "lostco")
      await create("/lost", ["citation.lost"], owner)
      const old = new Date(Date.now() - 20 * 86_400_000)
      expect((await importObservations(owner, "lostco", [observation(old, 0, false, "https://lostco.com/a")])).status).toBe(200)
      const sent = await waitFor("citation.lost", () => to("/lost")[0])
      expect(JSON.parse(sent.body).data).toEqual({ brand_slug: "lostco", domain: "lostco.com", engine: "perplexity" })
    })

    it("ingestion health per channel, refused deliveries counted (a wrong signature before the 403); ingestion.stalled", async () => {
      const t = await tenant(app, "growth")
      await create("/stalled", ["ingestion.stalled"], t.cookie)
      await app.fetch(`/api/v1/me/brands/${t.brandSlug}/drain-secret`, {
        method: "PUT",
        headers: { cookie: t.cookie, "content-type": "application/json" },
        body: JSON.stringify({ secret: "s3cret" })
      })
      const body = ndjson([requestRecord({ ua: UA.gptbot })])
      const refused = await postDrain(app, t.key, drainUrl(t.siteId), body, { "x-drain-signature": "0".repeat(40) })
      expect(refused.status).toBe(403)
      const batch = await postBatch(app, t.key, {
        site_id: t.siteId,
        channel: "edge_worker",
        records: [{ ua: UA.gptbot, path: "/x" }, { ua: "Mozilla/5.0 (Windows NT 10.0)", path: "/y" }, { nope: true }]
      })
      expect(batch.status).toBe(200)
      type Health = { channels: Array<Record<string, unknown>>; spool_pending: number; monthly_used: number; monthly_cap: number }
      // Each process writes its sums within a second (in two-process mode the deliveries went to both).
      const h = await waitFor("both channels", async () => {
        const health = await call(`/api/v1/me/brands/${t.brandSlug}/ingestion`, "GET", undefined, t.cookie)
        expect(health.status).toBe(200)
        const body = (await json(health)) as Health
        return body.channels.length === 2 ? body : undefined
      })
      expect(h).toMatchObject({ spool_pending: 0, monthly_used: 1, monthly_cap: 1_000_000 })
      const drain = h.channels.find((c) => c.channel === "drain")!
      // Refused before it was read: the format it asked for (none, so auto).
      expect(drain).toMatchObject({ format: "auto", deliveries_24h: 1, accepted_24h: 0, signature_failures_24h: 1 })
      const edge = h.channels.find((c) => c.channel === "edge_worker")!
      expect(edge).toMatchObject({ format: "json", deliveries_24h: 1, records_24h: 3, accepted_24h: 1, skipped_24h: 1, unparseable_24h: 1, signature_failures_24h: 0 })
      expect(typeof edge.last_received_at).toBe("string")
      expect((await call(`/api/v1/me/brands/${t.brandSlug}/ingestion`, "GET", undefined, other)).status).toBe(404)

      // Quiet for ALERT_STALL_HOURS (here 1.8 s): one ingestion.stalled per channel.
      await waitFor("ingestion.stalled", () => (to("/stalled").length >= 2 ? true : undefined), 20_000)
      await Bun.sleep(1_500)
      const stalled = to("/stalled").map((r) => JSON.parse(r.body).data as { channel: string; brand_slug: string })
      expect(stalled.map((s) => s.channel).sort()).toEqual(["drain", "edge_worker"])
      expect(stalled.every((s) => s.brand_slug === t.brandSlug)).toBe(true)
    }, 40_000)

    it("ingestion health names the log source a drain delivery was read as", async () => {
      const t = await tenant(app, "growth")
      const cloudflare = await postDrain(app, t.key, drainUrl(t.siteId), sourceBody("cloudflare", sourceRecords("cloudflare")))
      expect(cloudflare.status).toBe(200)
      const drain = await waitFor("the drain channel", async () => {
        const health = await call(`/api/v1/me/brands/${t.brandSlug}/ingestion`, "GET", undefined, t.cookie)
        const body = (await json(health)) as { channels: Array<Record<string, unknown>> }
        return body.channels.find((c) => c.channel === "drain")
      })
      expect(drain).toMatchObject({ format: "cloudflare", deliveries_24h: 1, records_24h: 5 })
    })

    it("crawler.spoofed_surge: a bot's spoofed hits in the last hour reaching ALERT_SPOOFED_MIN (here 3), once", async () => {
      const t = await tenant(app, "starter")
      await create("/spoofed", ["crawler.spoofed_surge"], t.cookie)
      // GPTBot from an address outside OpenAI's published ranges is judged spoofed at ingestion; one hit
      // without an address stays unverified and is not counted.
      const records = [
        { ua: UA.gptbot, path: "/s/0" },
        ...Array.from({ length: 3 }, (_, i) => ({ ua: UA.gptbot, path: `/s/${i + 1}`, ip: `203.0.113.${i + 1}` }))
      ]
      expect((await postBatch(app, t.key, { site_id: t.siteId, records })).status).toBe(200)
      const sent = await waitFor("crawler.spoofed_surge", () => to("/spoofed")[0], 20_000)
      expect(JSON.parse(sent.body)).toMatchObject({
        type: "crawler.spoofed_surge",
        data: { brand_slug: t.brandSlug, bot: "GPTBot", spoofed_hits: 3, window_hours: 1 }
      })
      await Bun.sleep(2_500)
      // Once per clock hour while the surge lasts (docs/webhooks.md): a run that crosses an hour's end
      // rightly gets the next hour's event too, never two of one hour.
      const hours = to("/spoofed").map((r) => (JSON.parse(r.body) as { timestamp: string }).timestamp.slice(0, 13))
      expect(new Set(hours).size).toBe(hours.length)
      expect(hours.length).toBeLessThanOrEqual(new Set([hours[0], new Date().toISOString().slice(0, 13)]).size)
    }, 40_000)

    it("each delivery goes out once (across server processes in the two-process mode)", async () => {
      const created = await create("/once", ALL_EVENTS)
      await Promise.all(Array.from({ length: 20 }, () => call(`/api/v1/me/webhooks/${created.id}/test`, "POST")))
      await waitFor("20 pings", () => (to("/once").length >= 20 ? true : undefined))
      await Bun.sleep(1_500)
      const ids = to("/once").map((r) => r.id)
      expect(ids).toHaveLength(20)
      expect(new Set(ids).size).toBe(20)
      const events = (await eventsOf(cookie)).filter((e) => e.type === "ping")
      expect(events.length).toBeGreaterThanOrEqual(20)
    })
  })
}

/** A resolver answering from a table the test changes (DNS rebinding). */
const fakeResolver = (table: Map<string, ReadonlyArray<string>>) =>
  Layer.succeed(AddressResolver, {
    resolve: (host) => {
      const found = table.get(host)
      return found === undefined ? Effect.fail(new UnresolvableHost({ host })) : Effect.succeed(found)
    }
  })

for (const backend of databaseBackends()) {
  describe(`webhook SSRF guard on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    const dns = new Map<string, ReadonlyArray<string>>([
      ["public.example", ["93.184.216.34"]],
      ["internal.example", ["10.0.0.5"]],
      ["mixed.example", ["93.184.216.34", "fd00::1"]],
      ["mapped.example", ["::ffff:127.0.0.1"]],
      ["rebind.example", ["93.184.216.34"]]
    ])
    beforeAll(async () => {
      app = await makeTestApp(backend, { addressResolver: fakeResolver(dns), webhooks: { retrySchedule: [], pollMs: 100 } })
      cookie = await signup(app, `ssrf-${backend}@example.test`)
    }, 120_000)
    afterAll(() => app.dispose())

    const create = (url: string) =>
      app.fetch("/api/v1/me/webhooks", {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ url, events: ["crawler.new_bot"] })
      })

    it("refuses http, and any host resolving to loopback, private, link-local or metadata addresses", async () => {
      for (const url of [
        "http://public.example/hook",
        "https://internal.example/hook",
        "https://mixed.example/hook",
        "https://mapped.example/hook",
        "https://127.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://[fe80::1]/hook",
        "https://unknown.example/hook",
        "https://user:pw@public.example/hook"
      ]) {
        const response = await create(url)
        expect({ url, status: response.status }).toEqual({ url, status: 400 })
        expect(((await json(response)) as { error: string }).error).toMatch(/^invalid url: /)
      }
      expect((await create("https://public.example/hook")).status).toBe(201)
    })

    it("checks the resolved address again at send time (DNS rebinding): refused, nothing sent", async () => {
      const created = (await json(await create("https://rebind.example/hook"))) as { id: string }
      dns.set("rebind.example", ["127.0.0.1"])
      await app.fetch(`/api/v1/me/webhooks/${created.id}/test`, { method: "POST", headers: { cookie } })
      const delivery = await waitFor("the refused attempt", async () => {
        const list = ((await json(await app.fetch(`/api/v1/me/webhooks/${created.id}/deliveries`, { headers: { cookie } }))) as {
          deliveries: Array<{ status: string; response_status: number | null; last_error: string | null }>
        }).deliveries
        return list[0]?.status === "failed" ? list[0] : undefined
      })
      expect(delivery.response_status).toBeNull()
      expect(delivery.last_error).toMatch(/^refused: .*loopback/)
    })
  })
}

for (const backend of databaseBackends()) {
  describe(`webhook auto-disable on ${backend}`, () => {
    let app: TestApp
    let receiver: ReturnType<typeof startReceiver>
    beforeAll(async () => {
      receiver = startReceiver()
      // Five days shortened to 1 ms: the second failed attempt disables the endpoint.
      app = await makeTestApp(backend, { webhooks: { allowPrivate: true, retrySchedule: [0, 0], pollMs: 100, disableAfterMs: 1 } })
    }, 120_000)
    afterAll(async () => {
      await app.dispose()
      receiver.stop()
    })

    it("an endpoint failing for the whole period is disabled, and says why", async () => {
      const cookie = await signup(app, `disable-${backend}@example.test`)
      const created = (await json(await app.fetch("/api/v1/me/webhooks", {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ url: `${receiver.base}/fail`, events: ["crawler.new_bot"] })
      }))) as { id: string }
      await app.fetch(`/api/v1/me/webhooks/${created.id}/test`, { method: "POST", headers: { cookie } })
      const endpoint = await waitFor("disabled", async () => {
        const list = ((await json(await app.fetch("/api/v1/me/webhooks", { headers: { cookie } }))) as {
          webhooks: Array<{ enabled: boolean; disabled_reason: string | null; failing_since: string | null }>
        }).webhooks
        return list[0]?.enabled === false ? list[0] : undefined
      })
      expect(endpoint.disabled_reason).toMatch(/^disabled automatically: every delivery failed for 5 days \(last: HTTP 500\)$/)
      // Disabled: the remaining attempt waits; enabling again clears the reason.
      const enabled = await app.fetch(`/api/v1/me/webhooks/${created.id}`, {
        method: "PATCH",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ enabled: true })
      })
      expect(await json(enabled)).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null })
    })
  })
}

describe.skipIf(!process.env.TEST_DATABASE_URL)("webhook deliveries survive a restart (postgres)", () => {
  it("a delivery pending when the server stops is sent by the next one, with the same webhook-id", async () => {
    const receiver = startReceiver()
    const url = await serverSchemaUrl(process.env.TEST_DATABASE_URL!)
    const options = { serverUrl: url, webhooks: { allowPrivate: true, retrySchedule: [2, 2], pollMs: 100 } }
    const first = await makeTestApp("postgres", options)
    let firstRunning = true
    let second: TestApp | undefined
    try {
      const cookie = await signup(first, "restart@example.test")
      const created = (await json(await first.fetch("/api/v1/me/webhooks", {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ url: `${receiver.base}/flaky/1`, events: ["crawler.new_bot"] })
      }))) as { id: string }
      await first.fetch(`/api/v1/me/webhooks/${created.id}/test`, { method: "POST", headers: { cookie } })
      // The first attempt fails (503); the server stops before the retry is due.
      await waitFor("the first attempt, recorded", async () => {
        const list = (await json(await first.fetch(`/api/v1/me/webhooks/${created.id}/deliveries`, { headers: { cookie } }))) as {
          deliveries: Array<{ status: string; attempts: number }>
        }
        return list.deliveries[0]?.attempts === 1 ? true : undefined
      })
      expect(receiver.received).toHaveLength(1)
      await first.dispose()
      firstRunning = false
      second = await makeTestApp("postgres", options)
      // The in-process app builds its services (the sender among them) on its first request.
      expect((await second.fetch("/healthz")).status).toBe(200)
      await waitFor("the retry", () => (receiver.received.length >= 2 ? true : undefined))
      expect(receiver.received[1]!.id).toBe(receiver.received[0]!.id)
      const list = (await json(await second.fetch(`/api/v1/me/webhooks/${created.id}/deliveries`, { headers: { cookie } }))) as {
        deliveries: Array<{ status: string; attempts: number }>
      }
      expect(list.deliveries[0]).toMatchObject({ status: "delivered", attempts: 2 })
    } finally {
      if (firstRunning) await first.dispose()
      await second?.dispose()
      receiver.stop()
    }
  }, 120_000)
})

for (const backend of databaseBackends()) {
  describe(`webhook sender connects to the address it checked on ${backend}`, () => {
    // Names under .invalid never resolve through the system resolver: only the fake answers them,
    // so a delivery that arrives went to the address the check saw, not to a second resolution.
    let app: TestApp
    let cookie: string
    const seen: Array<{ path: string; host: string | null }> = []
    const lookups: Array<string> = []
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) => {
        const url = new URL(request.url)
        seen.push({ path: url.pathname, host: request.headers.get("host") })
        if (url.pathname === "/moved") return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${url.port}/elsewhere` } })
        return new Response("ok")
      }
    })
    const dns = new Map<string, ReadonlyArray<string>>([["hook.invalid", ["127.0.0.1", "10.255.255.1"]]])
    const countingResolver = Layer.succeed(AddressResolver, {
      resolve: (host) => {
        lookups.push(host)
        const found = dns.get(host)
        return found === undefined ? Effect.fail(new UnresolvableHost({ host })) : Effect.succeed(found)
      }
    })
    beforeAll(async () => {
      app = await makeTestApp(backend, { addressResolver: countingResolver, webhooks: { allowPrivate: true, retrySchedule: [], pollMs: 100 } })
      cookie = await signup(app, `pinned-${backend}@example.test`)
    }, 120_000)
    afterAll(async () => {
      await app.dispose()
      receiver.stop(true)
    })

    const call = (path: string, method = "GET", body?: unknown) =>
      app.fetch(path, {
        method,
        headers: { cookie, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const lastDelivery = (id: string) =>
      waitFor("the attempt", async () => {
        const list = ((await json(await call(`/api/v1/me/webhooks/${id}/deliveries`))) as {
          deliveries: Array<{ status: string; attempts: number; response_status: number | null; last_error: string | null }>
        }).deliveries
        return list[0] !== undefined && list[0].status !== "pending" ? list[0] : undefined
      })

    it("a name only the AddressResolver knows is delivered to its first address, with the original host header", async () => {
      const created = await call("/api/v1/me/webhooks", "POST", { url: `http://hook.invalid:${receiver.port}/hook`, events: ["crawler.new_bot"] })
      expect(created.status).toBe(201)
      const { id } = (await json(created)) as { id: string }
      lookups.length = 0
      expect((await call(`/api/v1/me/webhooks/${id}/test`, "POST")).status).toBeLessThan(300)
      const delivery = await lastDelivery(id)
      expect(delivery).toMatchObject({ status: "delivered", response_status: 200, last_error: null })
      expect(seen.filter((r) => r.path === "/hook")).toEqual([{ path: "/hook", host: `hook.invalid:${receiver.port}` }])
      // One resolution for the attempt: the one checked and used.
      expect(lookups).toEqual(["hook.invalid"])
    })

    it("a redirect answer is a failed attempt, never followed", async () => {
      const created = await call("/api/v1/me/webhooks", "POST", { url: `http://hook.invalid:${receiver.port}/moved`, events: ["crawler.new_bot"] })
      const { id } = (await json(created)) as { id: string }
      await call(`/api/v1/me/webhooks/${id}/test`, "POST")
      const delivery = await lastDelivery(id)
      expect(delivery).toMatchObject({ status: "failed", response_status: 302, last_error: "HTTP 302" })
      expect(seen.filter((r) => r.path === "/moved")).toHaveLength(1)
      expect(seen.filter((r) => r.path === "/elsewhere")).toHaveLength(0)
    })

    it("a name that does not resolve is refused when saved", async () => {
      const response = await call("/api/v1/me/webhooks", "POST", { url: `http://nowhere.invalid:${receiver.port}/hook`, events: ["crawler.new_bot"] })
      expect(response.status).toBe(400)
      expect(((await json(response)) as { error: string }).error).toMatch(/^invalid url: url host nowhere\.invalid does not resolve/)
    })
  })
}

describe("a pinned https request", () => {
  // A local https receiver with a certificate for hook.invalid only, reached at 127.0.0.1.
  const cert = readFileSync(new URL("../fixtures/tls/hook.invalid.cert.pem", import.meta.url), "utf8")
  const key = readFileSync(new URL("../fixtures/tls/hook.invalid.key.pem", import.meta.url), "utf8")
  const hosts: Array<string | null> = []
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert, key },
    fetch: (request) => {
      hosts.push(request.headers.get("host"))
      return new Response("ok")
    }
  })
  afterAll(() => server.stop(true))
  const post = (name: string, ca?: string) => {
    const target = pinnedTarget({ url: new URL(`https://${name}:${server.port}/hook`), address: "127.0.0.1" })
    if (target === null) throw new Error("not pinned")
    return postPinned(target, { headers: { "content-type": "application/json" }, body: "{}", signal: AbortSignal.timeout(10_000) }, ca)
  }

  it("goes to the checked address, verifying the certificate for the original name", async () => {
    expect(pinnedTarget({ url: new URL(`https://hook.invalid:${server.port}/hook`), address: "127.0.0.1" })).toEqual({
      url: `https://127.0.0.1:${server.port}/hook`,
      host: `hook.invalid:${server.port}`,
      serverName: "hook.invalid"
    })
    expect(await post("hook.invalid", cert)).toBe(200)
    expect(hosts).toEqual([`hook.invalid:${server.port}`])
  })

  it("fails when the certificate is not valid for the name, or not trusted", async () => {
    await expect(post("other.invalid", cert)).rejects.toThrow(/ALTNAME|certificate/i)
    await expect(post("hook.invalid")).rejects.toThrow(/certificate|self.signed/i)
    expect(hosts).toHaveLength(1)
  })

  it("an address that cannot stand in a URL is not pinned (the client would resolve the name)", () => {
    expect(pinnedTarget({ url: new URL("https://hook.invalid/hook"), address: "fe80::1%eth0" })).toBeNull()
    expect(pinnedTarget({ url: new URL("https://hook.invalid:8443/x?y=1"), address: "2001:4860::1" })).toEqual({
      url: "https://[2001:4860::1]:8443/x?y=1",
      host: "hook.invalid:8443",
      serverName: "hook.invalid"
    })
  })
})
