import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { AddressResolver, UnresolvableHost } from "../../src/webhooks/Ssrf.js"
import { databaseBackends, json, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { postBatch, tenant, UA } from "../ingestion/fixtures.js"

/**
 * What keeps one account's webhooks from hurting another, and a webhook URL from reaching what it
 * must not (docs/webhooks.md, docs/security.md): the endpoint cap, the test pings' limit, a sender
 * fair across accounts (a slow local receiver), the address and port rules, the URL stored as
 * parsed, and delivery errors that say no more than their class.
 */

const waitFor = async <A>(what: string, probe: () => Promise<A | undefined> | A | undefined, ms = 15_000): Promise<A> => {
  const until = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

const caller = (app: TestApp) => (cookie: string, path: string, method = "GET", body?: unknown) =>
  app.fetch(path, {
    method,
    headers: { cookie, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

interface DeliveryOut {
  status: string
  attempts: number
  response_status: number | null
  last_error: string | null
  attempt_log: Array<{ error: string | null }>
}

for (const backend of databaseBackends()) {
  describe(`webhooks across accounts on ${backend}`, () => {
    let app: TestApp
    let call: ReturnType<typeof caller>
    // A receiver whose /slow/* answers after 8 s (the attempt timeout is 10 s) and /fast/* at once;
    // it counts the requests in progress on /slow.
    const arrivals: Array<{ path: string; at: number }> = []
    let slowNow = 0
    let slowMax = 0
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 30,
      fetch: async (request) => {
        const path = new URL(request.url).pathname
        arrivals.push({ path, at: Date.now() })
        if (path.startsWith("/slow/")) {
          slowNow++
          slowMax = Math.max(slowMax, slowNow)
          await Bun.sleep(8_000)
          slowNow--
        }
        return new Response("ok")
      }
    })
    const base = `http://127.0.0.1:${receiver.port}`

    beforeAll(async () => {
      app = await makeTestApp(backend, { webhooks: { allowPrivate: true, retrySchedule: [], pollMs: 200 } })
      call = caller(app)
      // The in-process app builds its services on its first request.
      expect((await app.fetch("/healthz")).status).toBe(200)
    }, 120_000)
    afterAll(async () => {
      await app.dispose()
      receiver.stop(true)
    })

    const create = (cookie: string, path: string, events: ReadonlyArray<string> = ["crawler.new_bot"]) =>
      call(cookie, "/api/v1/me/webhooks", "POST", { url: `${base}${path}`, events })

    it("an account has at most 20 endpoints: the 21st answers 403 with a JSON error and creates nothing", async () => {
      const cookie = await signup(app, `cap-${backend}@example.test`)
      const statuses: Array<number> = []
      for (let i = 0; i < 22; i++) statuses.push((await create(cookie, `/fast/cap/${i}`)).status)
      expect(statuses.slice(0, 20).every((status) => status === 201)).toBe(true)
      expect(statuses.slice(20)).toEqual([403, 403])
      const refused = await create(cookie, "/fast/cap/x")
      expect(await json(refused)).toEqual({ error: "webhook limit reached: at most 20 endpoints per account" })
      const list = (await json(await call(cookie, "/api/v1/me/webhooks"))) as { count: number }
      expect(list.count).toBe(20)
      // Deleting one makes room for one.
      const first = ((await json(await call(cookie, "/api/v1/me/webhooks"))) as { webhooks: Array<{ id: string }> }).webhooks[0]!
      expect((await call(cookie, `/api/v1/me/webhooks/${first.id}`, "DELETE")).status).toBe(204)
      expect((await create(cookie, "/fast/cap/again")).status).toBe(201)
      // Concurrent creates cannot pass the cap together.
      const other = await signup(app, `cap-race-${backend}@example.test`)
      const raced = await Promise.all(Array.from({ length: 30 }, (_, i) => create(other, `/fast/race/${i}`)))
      expect(raced.filter((r) => r.status === 201)).toHaveLength(20)
      expect(raced.filter((r) => r.status === 403)).toHaveLength(10)
      expect(((await json(await call(other, "/api/v1/me/webhooks"))) as { count: number }).count).toBe(20)
    })

    it("test pings: 10 a minute per account, then 429 with Retry-After; another account is not limited by it", async () => {
      const cookie = await signup(app, `ping-limit-${backend}@example.test`)
      const { id } = (await json(await create(cookie, "/fast/pings"))) as { id: string }
      const statuses: Array<number> = []
      let limited: Response | undefined
      for (let i = 0; i < 14; i++) {
        const response = await call(cookie, `/api/v1/me/webhooks/${id}/test`, "POST")
        statuses.push(response.status)
        if (response.status === 429) limited = response
      }
      expect(statuses.slice(0, 10).every((status) => status === 202)).toBe(true)
      expect(statuses.slice(10)).toEqual([429, 429, 429, 429])
      expect(await json(limited!)).toEqual({ error: "rate limit exceeded" })
      const retryAfter = Number(limited!.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(limited!.headers.get("ratelimit-limit")).toBe("10")
      // Ten pings were stored and sent, not fourteen.
      const pings = await waitFor("ten pings", () => {
        const got = arrivals.filter((a) => a.path === "/fast/pings")
        return got.length >= 10 ? got : undefined
      })
      await Bun.sleep(500)
      expect(arrivals.filter((a) => a.path === "/fast/pings")).toHaveLength(pings.length)
      expect(pings).toHaveLength(10)
      // Per account: another one pings at once.
      const other = await signup(app, `ping-other-${backend}@example.test`)
      const { id: otherId } = (await json(await create(other, "/fast/pings-other"))) as { id: string }
      expect((await call(other, `/api/v1/me/webhooks/${otherId}/test`, "POST")).status).toBe(202)
    })

    it("one account's slow receivers and backlog do not delay another account's ping by more than a few seconds", async () => {
      // Account A: as many endpoints as it may have, all slow, a test ping on each as often as it may,
      // and three crawler.new_bot events fanned out to every endpoint.
      const a = await tenant(app, "growth")
      const endpoints: Array<string> = []
      for (let i = 0; i < 40; i++) {
        const response = await create(a.cookie, `/slow/${i}`)
        if (response.status !== 201) break
        endpoints.push(((await json(response)) as { id: string }).id)
      }
      for (let round = 0; round < 2; round++) {
        for (const id of endpoints) await call(a.cookie, `/api/v1/me/webhooks/${id}/test`, "POST")
      }
      const batch = await postBatch(app, a.key, {
        site_id: a.siteId,
        records: [{ ua: UA.gptbot, path: "/a" }, { ua: UA.claudebot, path: "/b" }, { ua: UA.perplexitybot, path: "/c" }]
      })
      expect(batch.status).toBe(200)
      // A's first attempts are under way.
      await waitFor("A's first slow attempt", () => (slowNow > 0 ? true : undefined))
      await Bun.sleep(300)

      const b = await signup(app, `fair-b-${backend}@example.test`)
      const { id } = (await json(await create(b, "/fast/b"))) as { id: string }
      const asked = Date.now()
      expect((await call(b, `/api/v1/me/webhooks/${id}/test`, "POST")).status).toBe(202)
      const ping = await waitFor("B's ping", () => arrivals.find((r) => r.path === "/fast/b"), 20_000)
      expect(ping.at - asked).toBeLessThan(4_000)
      // A never had more than two attempts in flight, whatever the number of server processes.
      expect(slowMax).toBeGreaterThanOrEqual(1)
      expect(slowMax).toBeLessThanOrEqual(2)
    }, 60_000)

    it("retrying a delivery whose attempt is in flight starts no second, concurrent attempt", async () => {
      const cookie = await signup(app, `retry-flood-${backend}@example.test`)
      const { id } = (await json(await create(cookie, "/slow/retry"))) as { id: string }
      expect((await call(cookie, `/api/v1/me/webhooks/${id}/test`, "POST")).status).toBe(202)
      await waitFor("the slow attempt", () => arrivals.find((r) => r.path === "/slow/retry"))
      const [delivery] = ((await json(await call(cookie, `/api/v1/me/webhooks/${id}/deliveries`))) as { deliveries: Array<{ id: string }> })
        .deliveries
      for (let i = 0; i < 5; i++) {
        expect((await call(cookie, `/api/v1/me/webhooks/${id}/deliveries/${delivery!.id}/retry`, "POST")).status).toBe(202)
      }
      await Bun.sleep(1_500)
      expect(arrivals.filter((r) => r.path === "/slow/retry")).toHaveLength(1)
    }, 30_000)
  })
}

/** A resolver answering from a table the test changes. */
const tableResolver = (table: Map<string, ReadonlyArray<string>>) =>
  Layer.succeed(AddressResolver, {
    resolve: (host) => {
      const found = table.get(host)
      return found === undefined ? Effect.fail(new UnresolvableHost({ host })) : Effect.succeed(found)
    }
  })

/** Addresses of every class the IANA special-purpose registries say are not globally reachable. */
const NOT_GLOBAL: ReadonlyArray<[string, string]> = [
  ["0.1.2.3", "this network"],
  ["10.1.2.3", "private"],
  ["100.64.0.1", "shared"],
  ["127.0.0.2", "loopback"],
  ["169.254.169.254", "metadata"],
  ["172.16.0.1", "private"],
  ["192.0.0.8", "IETF protocol assignments"],
  ["192.0.0.170", "NAT64 discovery"],
  ["192.0.2.1", "documentation"],
  ["192.88.99.1", "deprecated 6to4 relay"],
  ["192.168.1.1", "private"],
  ["198.18.0.1", "benchmarking"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["224.0.0.1", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["::ffff:127.0.0.1", "IPv4-mapped"],
  ["::ffff:8.8.8.8", "IPv4-mapped, even of a public IPv4"],
  ["::ffff:0:127.0.0.1", "IPv4-translated"],
  ["::ffff:0:808:808", "IPv4-translated, even of a public IPv4"],
  ["64:ff9b::7f00:1", "NAT64 of a loopback IPv4"],
  ["64:ff9b:1::a00:1", "local-use NAT64"],
  ["64:ff9b:1::808:808", "local-use NAT64, even of a public IPv4"],
  ["100::1", "discard-only"],
  ["2001::1", "Teredo"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
  ["2001:2::1", "benchmarking"],
  ["2001:10::1", "deprecated ORCHID"],
  ["2001:db8::1", "documentation"],
  ["2002:808:808::1", "6to4, even of a public IPv4"],
  ["3fff::1", "documentation"],
  ["5f00::1", "segment routing"],
  ["fc00::1", "unique local"],
  ["fd12:3456::1", "unique local"],
  ["fe80::1", "link-local"],
  ["fec0::1", "site-local"],
  ["ff02::1", "multicast"]
]

const literal = (address: string) => (address.includes(":") ? `[${address}]` : address)

for (const backend of databaseBackends()) {
  describe(`webhook address and port rules on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    let call: ReturnType<typeof caller>
    const dns = new Map<string, ReadonlyArray<string>>([
      ["public.example", ["93.184.216.34"]],
      ["public6.example", ["2606:4700:4700::1111"]],
      ["rebind.example", ["93.184.216.34"]],
      ...NOT_GLOBAL.map(([address], i): [string, ReadonlyArray<string>] => [`class${i}.example`, [address]])
    ])
    beforeAll(async () => {
      app = await makeTestApp(backend, {
        addressResolver: tableResolver(dns),
        webhooks: { retrySchedule: [], pollMs: 100, maxEndpoints: 100 }
      })
      cookie = await signup(app, `rules-${backend}@example.test`)
      call = caller(app)
    }, 120_000)
    afterAll(() => app.dispose())

    const create = (url: string) => call(cookie, "/api/v1/me/webhooks", "POST", { url, events: ["crawler.new_bot"] })
    const refusedWith = async (url: string) => {
      const response = await create(url)
      const body = (await json(response)) as { error?: string }
      return { url, status: response.status, invalid: /^invalid url: /.test(body.error ?? "") }
    }

    it("refuses every address the IANA registries do not call globally reachable, written in the URL (both families)", async () => {
      for (const [address] of NOT_GLOBAL) {
        expect(await refusedWith(`https://${literal(address)}/hook`)).toEqual({ url: `https://${literal(address)}/hook`, status: 400, invalid: true })
      }
      for (const address of ["93.184.216.34", "192.0.0.9", "[2606:4700:4700::1111]", "[64:ff9b::808:808]", "[2620:4f:8000::1]"]) {
        expect({ address, status: (await create(`https://${address}/hook`)).status }).toEqual({ address, status: 201 })
      }
    })

    it("refuses a name resolving to any of them, without telling the address it resolved to", async () => {
      for (let i = 0; i < NOT_GLOBAL.length; i++) {
        const response = await create(`https://class${i}.example/hook`)
        const body = (await json(response)) as { error: string }
        expect({ i, status: response.status }).toEqual({ i, status: 400 })
        expect(body.error).toMatch(/^invalid url: url host resolves to an? .* address$/)
        expect(body.error).not.toContain(NOT_GLOBAL[i]![0])
      }
      expect((await create("https://public.example/hook")).status).toBe(201)
      expect((await create("https://public6.example/hook")).status).toBe(201)
    })

    it("checks them again at delivery, after resolution: refused, nothing sent, no address in the log", async () => {
      const { id } = (await json(await create("https://rebind.example/hook"))) as { id: string }
      for (const [address] of [["::ffff:0:127.0.0.1"], ["2001::1"], ["192.88.99.1"], ["64:ff9b:1::a00:1"]] as const) {
        dns.set("rebind.example", [address])
        expect((await call(cookie, `/api/v1/me/webhooks/${id}/test`, "POST")).status).toBe(202)
        const delivery = await waitFor("the refused attempt", async () => {
          const list = ((await json(await call(cookie, `/api/v1/me/webhooks/${id}/deliveries`))) as { deliveries: Array<DeliveryOut> }).deliveries
          return list[0]?.status === "failed" ? list[0] : undefined
        })
        expect(delivery.response_status).toBeNull()
        expect(delivery.last_error).toMatch(/^refused: url host resolves to an? .* address$/)
        expect(delivery.last_error).not.toContain(address)
      }
    })

    it("allows only the ports 443 and 8443 (0, 22, 6379, 80, 8080 and the rest refused)", async () => {
      for (const port of [0, 1, 22, 25, 80, 6379, 8080, 9200, 65535]) {
        for (const host of ["public.example", "93.184.216.34"]) {
          const response = await create(`https://${host}:${port}/hook`)
          expect({ port, host, status: response.status }).toEqual({ port, host, status: 400 })
          expect(((await json(response)) as { error: string }).error).toBe("invalid url: url port must be one of 443, 8443")
        }
      }
      expect((await create("https://public.example:443/hook")).status).toBe(201)
      expect((await create("https://public.example:8443/hook")).status).toBe(201)
    })

    it("stores (and shows) the URL as WHATWG URL parses it, on create and on PATCH", async () => {
      const cases: ReadonlyArray<[string, string]> = [
        ["https://public.example\\@127.0.0.1/", "https://public.example/@127.0.0.1/"],
        ["  HTTPS://PUBLIC.EXAMPLE:443/a/../hook?x=1#fragment ", "https://public.example/hook?x=1"],
        ["https://public.example:8443/caf\u00e9 hook", "https://public.example:8443/caf%C3%A9%20hook"],
        ["https://0x5d.184.216.34/hook", "https://93.184.216.34/hook"],
        ["https://[2606:4700:4700:0:0:0:0:1111]/", "https://[2606:4700:4700::1111]/"]
      ]
      for (const [given, stored] of cases) {
        const response = await create(given)
        expect({ given, status: response.status }).toEqual({ given, status: 201 })
        const created = (await json(response)) as { id: string; url: string }
        expect(created.url).toBe(stored)
        const listed = ((await json(await call(cookie, "/api/v1/me/webhooks"))) as { webhooks: Array<{ id: string; url: string }> }).webhooks
        expect(listed.find((w) => w.id === created.id)!.url).toBe(stored)
      }
      const { id } = (await json(await create("https://public.example/first"))) as { id: string }
      const patched = await call(cookie, `/api/v1/me/webhooks/${id}`, "PATCH", { url: "https://public.example\\@10.0.0.1/x" })
      expect(patched.status).toBe(200)
      expect(((await json(patched)) as { url: string }).url).toBe("https://public.example/@10.0.0.1/x")
      // A backslash before an @ never makes the part after it the host.
      expect((await create("https://127.0.0.1\\@public.example/")).status).toBe(400)
    })
  })
}

describe("the delivery log says what failed, not the client's own words", () => {
  // In process (a short attempt timeout has no environment equivalent): a closed port, a TLS
  // receiver whose certificate the server does not trust, and a receiver slower than the timeout.
  let app: TestApp
  let cookie: string
  let call: ReturnType<typeof caller>
  const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") })
  const closedPort = closed.port
  closed.stop(true)
  const tls = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: {
      cert: readFileSync(new URL("../fixtures/tls/hook.invalid.cert.pem", import.meta.url), "utf8"),
      key: readFileSync(new URL("../fixtures/tls/hook.invalid.key.pem", import.meta.url), "utf8")
    },
    fetch: () => new Response("ok")
  })
  const slow = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async () => {
      await Bun.sleep(3_000)
      return new Response("late")
    }
  })
  beforeAll(async () => {
    app = await makeTestApp("pglite", { webhooks: { allowPrivate: true, retrySchedule: [], pollMs: 100, timeoutMs: 1_000 } })
    cookie = await signup(app, "coarse@example.test")
    call = caller(app)
  }, 120_000)
  afterAll(async () => {
    await app.dispose()
    tls.stop(true)
    slow.stop(true)
  })

  const attemptError = async (url: string) => {
    const created = await call(cookie, "/api/v1/me/webhooks", "POST", { url, events: ["crawler.new_bot"] })
    expect(created.status).toBe(201)
    const { id } = (await json(created)) as { id: string }
    await call(cookie, `/api/v1/me/webhooks/${id}/test`, "POST")
    const delivery = await waitFor("the failed attempt", async () => {
      const list = ((await json(await call(cookie, `/api/v1/me/webhooks/${id}/deliveries`))) as { deliveries: Array<DeliveryOut> }).deliveries
      return list[0]?.status === "failed" ? list[0] : undefined
    })
    expect(delivery.response_status).toBeNull()
    expect(delivery.attempt_log.map((a) => a.error)).toEqual([delivery.last_error])
    return delivery.last_error
  }

  it("a closed port: connection failed", async () => {
    expect(await attemptError(`http://127.0.0.1:${closedPort}/hook`)).toBe("connection failed")
  })

  it("a certificate not trusted: tls error", async () => {
    expect(await attemptError(`https://127.0.0.1:${tls.port}/hook`)).toBe("tls error")
  })

  it("no answer within the timeout: timeout", async () => {
    expect(await attemptError(`http://127.0.0.1:${slow.port}/hook`)).toBe("timeout")
  })
})
