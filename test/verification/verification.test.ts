import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { ResolveError } from "../../src/verification/Resolver.js"
import { RANGES_CHANNEL, VERIFICATION_DEFAULTS, Verification, type VerifyInput } from "../../src/verification/Verification.js"
import { createHash, generateKeyPairSync, sign } from "node:crypto"
import { Database } from "../../src/platform/Sql.js"
import { VerificationRepo } from "../../src/verification/Repo.js"
import { resolverFake } from "../../src/verification/Resolver.js"
import { bundledSnapshot } from "../../src/verification/Snapshot.js"
import { rangesUpdate } from "../../src/verification/cli.js"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bearer, databaseBackends, fixedClock, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { postBatch, tenant, type Tenant, UA } from "../ingestion/fixtures.js"

/**
 * Verified agents over HTTP (docs/verification.md): the three verdicts at ingestion, the filter and
 * breakdown on /agents and /agents/pages, reverse DNS through the resolver fake (late answers settled
 * by the background pass), a range snapshot saved and reloaded without a restart, Web Bot Auth.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

const YANDEX = "Mozilla/5.0 (compatible; YandexAdditional/3.0; +http://yandex.com/bots)"
const BYTESPIDER = "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)"
const CCBOT = "CCBot/2.0 (https://commoncrawl.org/faq/)"
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0)
const TS = Math.floor(NOW / 1000) - 3600

const rec = (ua: string, ip: string | undefined, path = "/pricing", extra: Record<string, unknown> = {}) => ({
  ua,
  path,
  ts: TS,
  status: 200,
  ...(ip === undefined ? {} : { ip }),
  ...extra
})

interface Dashboard {
  kpis: { hits: number; pages: number; bots: number }
  breakdowns: {
    by_bot: Array<{ bot: string; hits: number }>
    by_kind: Array<{ hits: number }>
    by_status: Array<{ hits: number }>
    by_vendor: Array<{ hits: number }>
    by_verification: Array<{ verification: string; hits: number }>
  }
  trend: Array<{ hits: number }>
  top_pages: Array<{ path: string; hits: number }>
}
interface Pages {
  pages: Array<{ path: string; hits: number; bots: Array<string> }>
  total: number
}

const sum = (rows: ReadonlyArray<{ hits: number }>) => rows.reduce((n, r) => n + r.hits, 0)

for (const backend of backends) {
  describe(`verified agents on ${backend}`, () => {
    let app: TestApp
    let slow = false

    beforeAll(async () => {
      app = await makeTestApp(backend, {
        now: new Date(NOW),
        resolver: resolverFake({
          ptr: {
            "5.255.253.1": ["5-255-253-1.spider.yandex.com"],
            "5.255.253.2": ["host.attacker.example"],
            "5.255.253.3": ["fake.yandex.com"],
            "5.255.253.4": ["5-255-253-4.spider.yandex.com"]
          },
          addresses: {
            "5-255-253-1.spider.yandex.com": ["5.255.253.1"],
            "host.attacker.example": ["5.255.253.2"],
            // The PTR name claims yandex.com but resolves elsewhere: not forward-confirmed.
            "fake.yandex.com": ["198.51.100.1"],
            "5-255-253-4.spider.yandex.com": ["5.255.253.4"]
          },
          delayMs: () => (slow ? 400 : 0)
        }),
        verification: { dnsWaitMs: 100, passEveryMs: 250 }
      })
    }, 60_000)
    afterAll(() => app.dispose())

    const ingest = async (t: Tenant, records: ReadonlyArray<unknown>) => {
      const response = await postBatch(app, t.key, { site_id: t.siteId, records })
      expect(response.status).toBe(200)
      return (await response.json()) as { accepted: number }
    }
    const dashboard = async (t: Tenant, params: string) => {
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents?range=7d${params}`, { headers: bearer(t.key) })
      expect(response.status).toBe(200)
      return (await response.json()) as Dashboard
    }
    const pages = async (t: Tenant, params: string) => {
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=7d${params}`, { headers: bearer(t.key) })
      expect(response.status).toBe(200)
      return (await response.json()) as Pages
    }
    const verdicts = async (t: Tenant, params = "") =>
      Object.fromEntries((await dashboard(t, params)).breakdowns.by_verification.map((v) => [v.verification, v.hits]))

    describe("the three verdicts", () => {
      let t: Tenant
      beforeAll(async () => {
        t = await tenant(app, "growth")
        const accepted = await ingest(t, [
          rec(UA.gptbot, "20.171.206.10", "/a"), // in GPTBot's published IPv4 ranges: verified
          rec(UA.gptbot, "2600:1f28:365:8000::9", "/a"), // an IPv6 address outside them: spoofed
          rec(UA.gptbot, "203.0.113.9", "/b"), // outside: spoofed
          rec(UA.gptbot, undefined, "/b"), // no client IP: unverified
          rec(CCBOT, "2600:1f28:365:8000::9", "/c"), // in Common Crawl's IPv6 range: verified
          rec(CCBOT, "not-an-ip", "/c"), // unparsable: unverified
          rec(BYTESPIDER, "203.0.113.9", "/a"), // ByteDance publishes no method: unverified
          rec(UA.chatgptUser, "::ffff:20.171.206.10", "/d") // GPTBot's range, not ChatGPT-User's: spoofed
        ])
        expect(accepted.accepted).toBe(8)
      })

      it("breakdowns.by_verification: the three values in order, zeros included", async () => {
        const body = await dashboard(t, "")
        expect(body.breakdowns.by_verification).toEqual([
          { verification: "verified", hits: 2 },
          { verification: "spoofed", hits: 3 },
          { verification: "unverified", hits: 3 }
        ])
        const none = await tenant(app, "growth")
        expect((await dashboard(none, "")).breakdowns.by_verification).toEqual([
          { verification: "verified", hits: 0 },
          { verification: "spoofed", hits: 0 },
          { verification: "unverified", hits: 0 }
        ])
      })

      it("the filter selects hits and combines with bot, vendor and kind", async () => {
        const verified = await dashboard(t, "&verification=verified")
        expect(verified.kpis.hits).toBe(2)
        expect(verified.breakdowns.by_bot.map((b) => [b.bot, b.hits]).sort()).toEqual([["CCBot", 1], ["GPTBot", 1]])
        expect((await dashboard(t, "&verification=spoofed&bot=GPTBot")).kpis.hits).toBe(2)
        expect((await dashboard(t, "&verification=spoofed&vendor=OpenAI")).kpis.hits).toBe(3)
        expect((await dashboard(t, "&verification=unverified&kind=training_crawler")).kpis.hits).toBe(3)
        expect((await dashboard(t, "&verification=verified&bot=Bytespider")).kpis.hits).toBe(0)
        const list = await pages(t, "&verification=spoofed&bot=GPTBot")
        expect(list.pages.map((p) => [p.path, p.hits, p.bots])).toEqual([["/a", 1, ["GPTBot"]], ["/b", 1, ["GPTBot"]]])
        expect(list.total).toBe(2)
        expect((await pages(t, "&verification=verified")).pages.map((p) => p.path)).toEqual(["/a", "/c"])
      })

      it("totals add up across the verdicts for every filter; unset, the figures are those of all hits", async () => {
        for (const filter of ["", "&bot=GPTBot", "&vendor=OpenAI", "&kind=training_crawler", "&bot=CCBot", "&kind=browsing_agent"]) {
          const all = await dashboard(t, filter)
          const parts = await Promise.all(["verified", "spoofed", "unverified"].map((v) => dashboard(t, `${filter}&verification=${v}`)))
          expect(sum(parts.map((p) => ({ hits: p.kpis.hits })))).toBe(all.kpis.hits)
          expect(sum(all.breakdowns.by_verification)).toBe(all.kpis.hits)
          for (const p of parts) {
            expect(sum(p.breakdowns.by_bot)).toBe(p.kpis.hits)
            expect(sum(p.breakdowns.by_status)).toBe(p.kpis.hits)
            expect(sum(p.trend)).toBe(p.kpis.hits)
            expect(sum(p.breakdowns.by_verification)).toBe(p.kpis.hits)
          }
          const allPages = await pages(t, filter)
          const partPages = await Promise.all(["verified", "spoofed", "unverified"].map((v) => pages(t, `${filter}&verification=${v}`)))
          expect(sum(partPages.flatMap((p) => p.pages))).toBe(sum(allPages.pages))
          expect(sum(allPages.pages)).toBe(all.kpis.hits)
        }
        expect((await dashboard(t, "")).kpis.hits).toBe(8)
      })

      it("400 for an unknown verdict", async () => {
        const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents?verification=maybe`, { headers: bearer(t.key) })
        expect(response.status).toBe(400)
        expect(await response.text()).toContain("must be one of verified, spoofed, unverified")
      })
    })

    describe("reverse DNS through the resolver (forward-confirmed)", () => {
      it("verified when the name is the operator's and resolves back; spoofed otherwise", async () => {
        const t = await tenant(app, "growth")
        await ingest(t, [
          rec(YANDEX, "5.255.253.1", "/ok"),
          rec(YANDEX, "5.255.253.2", "/wrong-name"),
          rec(YANDEX, "5.255.253.3", "/not-confirmed"),
          rec(YANDEX, "5.255.253.9", "/no-ptr")
        ])
        expect(await verdicts(t)).toEqual({ verified: 1, spoofed: 3, unverified: 0 })
        expect((await pages(t, "&verification=verified")).pages.map((p) => p.path)).toEqual(["/ok"])
      })

      it("a late answer: stored unverified, then upgraded by the background pass, rollups included", async () => {
        const t = await tenant(app, "growth")
        slow = true
        try {
          await ingest(t, [rec(YANDEX, "5.255.253.4", "/late"), rec(YANDEX, "5.255.253.4", "/late")])
          expect(await verdicts(t)).toEqual({ verified: 0, spoofed: 0, unverified: 2 })
          let now = await verdicts(t)
          for (let i = 0; i < 40 && now.verified !== 2; i++) {
            await Bun.sleep(100)
            now = await verdicts(t)
          }
          expect(now).toEqual({ verified: 2, spoofed: 0, unverified: 0 })
        } finally {
          slow = false
        }
        expect((await pages(t, "&verification=verified")).pages).toEqual([
          expect.objectContaining({ path: "/late", hits: 2, bots: ["YandexAdditional"] })
        ])
        expect((await pages(t, "&verification=unverified")).pages).toEqual([])
        expect((await dashboard(t, "")).kpis.hits).toBe(2)
      })
    })

    describe("a new range snapshot and key directory, reloaded without a restart", () => {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519")
      const x = publicKey.export({ format: "jwk" }).x!
      const kid = createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url")

      beforeAll(async () => {
        const base = bundledSnapshot()
        const snapshot = {
          ...base,
          date: "2026-11-23",
          read_from: "test",
          files: [...base.files, {
            file: "bytedance.json",
            operator: "ByteDance",
            source_url: "https://example.test/bytespider.json",
            agents: ["Bytespider"],
            prefixes: ["198.51.100.0/24", "2001:db8:b::/48"]
          }],
          directories: [{ signature_agent: "https://chatgpt.com", operator: "OpenAI", source_url: "test", keys: [{ kty: "OKP", crv: "Ed25519", x }] }]
        }
        await app.run(Effect.gen(function*() {
          yield* Effect.flatMap(VerificationRepo, (repo) => repo.saveSnapshot(JSON.stringify(snapshot)))
          yield* Effect.flatMap(Database, (db) => db.notify(RANGES_CHANNEL, "test")).pipe(Effect.orDie)
        }))
      })

      it("an agent the new files name is verified from its ranges (IPv4 and IPv6), spoofed outside", async () => {
        const t = await tenant(app, "growth")
        let result = { verified: 0, spoofed: 0, unverified: 0 } as Record<string, number>
        for (let i = 0; i < 30; i++) {
          // Until the NOTIFY has been handled the agent has no method (unverified); after, the verdicts below.
          const probe = await tenant(app, "growth")
          await ingest(probe, [rec(BYTESPIDER, "198.51.100.7")])
          if ((await verdicts(probe)).verified === 1) break
          await Bun.sleep(100)
        }
        await ingest(t, [rec(BYTESPIDER, "198.51.100.7"), rec(BYTESPIDER, "2001:db8:b::1"), rec(BYTESPIDER, "192.0.2.1")])
        result = await verdicts(t)
        expect(result).toEqual({ verified: 2, spoofed: 1, unverified: 0 })
      })

      it("Web Bot Auth: a valid signature of the operator's directory verifies, a forged one does not", async () => {
        const t = await tenant(app, "growth")
        const created = TS - 10
        const input = `sig1=("@authority" "@method" "@path" "signature-agent");created=${created};expires=${created + 300};keyid="${kid}";alg="ed25519";tag="web-bot-auth"`
        const base = [
          `"@authority": example.com`,
          `"@method": GET`,
          `"@path": /signed`,
          `"signature-agent": "https://chatgpt.com"`,
          `"@signature-params": ${input.slice("sig1=".length)}`
        ].join("\n")
        const signature = `sig1=:${sign(null, Buffer.from(base), privateKey).toString("base64")}:`
        const signed = (path: string, sig: string) =>
          rec(UA.chatgptUser, "192.0.2.50", path, {
            host: "example.com",
            method: "GET",
            signature: sig,
            signature_input: input,
            signature_agent: `"https://chatgpt.com"`
          })
        await ingest(t, [signed("/signed", signature), signed("/tampered", signature)])
        expect(await verdicts(t)).toEqual({ verified: 1, spoofed: 1, unverified: 0 })
        expect((await pages(t, "&verification=verified")).pages.map((p) => p.path)).toEqual(["/signed"])
      })

      it("Web Bot Auth: a signature outside the draft's profile does not verify, however well signed", async () => {
        const t = await tenant(app, "growth")
        const created = TS - 10
        const all = `("@authority" "@method" "@path" "signature-agent")`
        const params = (extra: string) => `;keyid="${kid}";alg="ed25519"${extra}`
        // Each input is a correct Ed25519 signature by the directory's key over its own base.
        const inputs: ReadonlyArray<readonly [string, string]> = [
          ["/valid", `${all};created=${created};expires=${created + 300}${params(`;tag="web-bot-auth"`)}`],
          ["/no-times", `${all}${params(`;tag="web-bot-auth"`)}`],
          ["/no-expires", `${all};created=${created}${params(`;tag="web-bot-auth"`)}`],
          ["/covers-nothing", `();created=${created};expires=${created + 300}${params(`;tag="web-bot-auth"`)}`],
          ["/no-authority", `("@method" "@path" "signature-agent");created=${created};expires=${created + 300}${params(`;tag="web-bot-auth"`)}`],
          ["/agent-uncovered", `("@authority" "@method" "@path");created=${created};expires=${created + 300}${params(`;tag="web-bot-auth"`)}`],
          ["/no-tag", `${all};created=${created};expires=${created + 300}${params("")}`],
          ["/other-tag", `${all};created=${created};expires=${created + 300}${params(`;tag="other"`)}`],
          ["/expires-first", `${all};created=${created};expires=${created - 1}${params(`;tag="web-bot-auth"`)}`],
          ["/year-long", `${all};created=${created};expires=${created + 366 * 86400}${params(`;tag="web-bot-auth"`)}`]
        ]
        const records = inputs.map(([path, value]) => {
          const components = value.slice(1, value.indexOf(")")).split(" ").filter((c) => c !== "")
          const lines = components.map((c) => {
            const name = c.slice(1, -1)
            const v = name === "@authority" ? "example.com" : name === "@method" ? "GET" : name === "@path" ? path : `"https://chatgpt.com"`
            return `${c}: ${v}`
          })
          const base = [...lines, `"@signature-params": ${value}`].join("\n")
          return rec(UA.chatgptUser, "192.0.2.50", path, {
            host: "example.com",
            method: "GET",
            signature: `sig1=:${sign(null, Buffer.from(base), privateKey).toString("base64")}:`,
            signature_input: `sig1=${value}`,
            signature_agent: `"https://chatgpt.com"`
          })
        })
        await ingest(t, records)
        expect((await pages(t, "&verification=verified")).pages.map((p) => p.path)).toEqual(["/valid"])
        expect(await verdicts(t)).toEqual({ verified: 1, spoofed: inputs.length - 1, unverified: 0 })
      })
    })

    describe("cli ranges update --from DIR", () => {
      it("saves the folder's files as the newest snapshot; the running app checks against them", async () => {
        const dir = mkdtempSync(join(tmpdir(), "aiv-ranges-"))
        const manifest = JSON.parse(readFileSync(join(import.meta.dir, "../../src/verification/ranges/manifest.json"), "utf8")) as {
          files: Array<{ file: string }>
        }
        for (const { file } of manifest.files) {
          // The operators' shape for OpenAI's GPTBot file, plain text for the others.
          writeFileSync(join(dir, file), file === "openai-gptbot.json"
            ? JSON.stringify({ creationTime: "2026-11-23T00:00:00Z", prefixes: [{ ipv4Prefix: "192.0.2.0/24" }, { ipv6Prefix: "2001:db8:9::/48" }] })
            : "# test\n198.18.0.0/15\n")
        }
        await app.run(rangesUpdate(["--from", dir]))
        let found = { verified: 0, spoofed: 0, unverified: 0 } as Record<string, number>
        for (let i = 0; i < 30 && found.verified !== 2; i++) {
          const probe = await tenant(app, "growth")
          await ingest(probe, [rec(UA.gptbot, "192.0.2.5"), rec(UA.gptbot, "2001:db8:9::5"), rec(UA.gptbot, "20.171.206.10")])
          found = await verdicts(probe)
          if (found.verified !== 2) await Bun.sleep(100)
        }
        // The old GPTBot range is gone from the new snapshot: 20.171.206.10 is now outside it.
        expect(found).toEqual({ verified: 2, spoofed: 1, unverified: 0 })
      })

      it("a folder without a readable file saves nothing and says so", async () => {
        const dir = mkdtempSync(join(tmpdir(), "aiv-ranges-empty-"))
        await expect(app.run(rangesUpdate(["--from", dir]))).rejects.toThrow("no range file could be read")
      })
    })
  })
}

// A range update reaches every server process through NOTIFY (with TEST_SERVERS=2, two real processes
// whose requests alternate; otherwise the in-process app on each database back end).
for (const backend of databaseBackends()) {
  describe(`range reload across server processes on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    }, 60_000)
    afterAll(() => app.dispose())

    it("after ranges update, each server checks against the new snapshot without a restart", async () => {
      const dir = mkdtempSync(join(tmpdir(), "aiv-ranges-x-"))
      writeFileSync(join(dir, "openai-gptbot.json"), "192.0.2.0/24\n")
      await app.run(rangesUpdate(["--from", dir]))
      let verified = 0
      for (let i = 0; i < 50 && verified < 2; i++) {
        // Two deliveries a round: with two servers, one each.
        verified = 0
        for (let k = 0; k < 2; k++) {
          const probe = await tenant(app, "growth")
          // An hour ago by the real clock (this app has no fixed one): inside the 7 days read back.
          const response = await postBatch(app, probe.key, {
            site_id: probe.siteId,
            records: [rec(UA.gptbot, "192.0.2.77", "/pricing", { ts: Math.floor(Date.now() / 1000) - 3600 })]
          })
          expect(response.status).toBe(200)
          const body = await (await app.fetch(`/api/public/v1/brands/${probe.brandSlug}/agents?range=7d`, { headers: bearer(probe.key) })).json() as Dashboard
          verified += body.breakdowns.by_verification[0]!.hits
        }
        if (verified < 2) await Bun.sleep(100)
      }
      expect(verified).toBe(2)
    })
  })
}

describe("reverse DNS when the resolver fails: bounded per delivery, failures cached for a while", () => {
  // Every PTR query fails (a DNS server that errors or is unreachable), counted per address.
  const calls = new Map<string, number>()
  let app: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake", {
      resolver: {
        reverse: (ip) =>
          Effect.suspend(() => {
            calls.set(ip, (calls.get(ip) ?? 0) + 1)
            return Effect.fail(new ResolveError({ reason: "failed" }))
          }),
        forward: () => Effect.fail(new ResolveError({ reason: "failed" }))
      },
      verification: { dnsWaitMs: 50, dnsConcurrency: 4, passEveryMs: 3_600_000 }
    })
  }, 60_000)
  afterAll(() => app.dispose())

  const hit = (ip: string): VerifyInput => ({
    bot: "YandexAdditional",
    vendor: "Yandex",
    clientIp: ip,
    ts: NOW,
    method: "GET",
    host: "acme.example",
    path: "/",
    query: ""
  })
  const ips = Array.from({ length: 200 }, (_, i) => `10.9.${i >> 8}.${i & 255}`)
  const verdicts = async (addresses: ReadonlyArray<string>, at: number) => {
    const out = await app.runServices(
      Effect.flatMap(Verification, (v) => v.verdicts(addresses.map(hit))).pipe(Effect.withClock(fixedClock(new Date(at))))
    )
    // The checks run on after the delivery's wait; let them finish before counting.
    await Bun.sleep(100)
    return out
  }
  const total = () => [...calls.values()].reduce((n, c) => n + c, 0)
  const perDelivery = VERIFICATION_DEFAULTS.dnsPerDelivery

  it("a delivery of many unresolvable addresses starts a bounded number of checks; failed ones wait out the negative TTL", async () => {
    const first = await verdicts(ips, NOW)
    expect(first.every((o) => o.verification === "unverified" && o.verifyPending)).toBe(true)
    expect(total()).toBe(perDelivery)
    const tried = [...calls.keys()]

    // A minute later: the addresses that failed are not asked again; the delivery starts others, as many.
    const second = await verdicts(ips, NOW + 60_000)
    expect(second.every((o) => o.verification === "unverified" && o.verifyPending)).toBe(true)
    expect(total()).toBe(2 * perDelivery)
    expect([...calls.values()].every((n) => n === 1)).toBe(true)
    await verdicts(tried, NOW + 120_000)
    expect(total()).toBe(2 * perDelivery)

    // Past the negative TTL they are asked again.
    await verdicts(tried, NOW + VERIFICATION_DEFAULTS.negativeTtlMs + 1)
    expect(total()).toBe(3 * perDelivery)
    expect(tried.every((ip) => calls.get(ip) === 2)).toBe(true)
  })
})
