import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough } from "node:stream"
import { gzipSync } from "node:zlib"
import { parseShipArgs, runShip, type ShipIo, ShipUsageError } from "../../src/ingestion/shipCli.js"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { tenant, type Tenant, UA } from "./fixtures.js"
import { sourceBody, sourceRecords } from "./sources.js"

/**
 * `bun run cli ship` as a user runs it: the real command line, in a child process, against a
 * server listening on a local port (the test app behind Bun.serve). Then the client's stop and
 * retry rules against scripted answers.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]
const dir = mkdtempSync(join(tmpdir(), "aiv-ship-"))

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const pad = (n: number) => String(n).padStart(2, "0")
const clf = (ms: number) => {
  const d = new Date(ms)
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`
}
/** `n` lines of a combined log over the last day; every 10th a GPTBot request, two identical lines at the end. */
const combinedLog = (n: number, tag: string) => {
  const t0 = Date.now() - 86_400_000
  const lines: Array<string> = []
  for (let i = 0; i < n; i++) {
    const ua = i % 10 === 0 ? UA.gptbot : UA.chrome
    lines.push(`198.51.100.${i % 200} - - [${clf(t0 + i * 1000)}] "GET /${tag}/page-${i % 50}?n=${i} HTTP/1.1" 200 ${100 + i} "-" "${ua}"`)
  }
  lines.push(lines[0]!, lines[0]!)
  return lines.join("\n") + "\n"
}
const CRAWLER_LINES = (n: number) => Math.ceil(n / 10) + 2

for (const backend of backends) {
  describe(`ship on ${backend}`, () => {
    let app: TestApp
    let server: ReturnType<typeof Bun.serve>
    let base: string
    let t: Tenant

    beforeAll(async () => {
      app = await makeTestApp(backend)
      t = await tenant(app, "growth")
      server = Bun.serve({
        port: 0,
        fetch: async (request) => {
          const url = new URL(request.url)
          const headers: Record<string, string> = {}
          request.headers.forEach((v, k) => (headers[k] = v))
          return app.fetch(url.pathname + url.search, {
            method: request.method,
            headers,
            ...(request.method === "GET" ? {} : { body: await request.arrayBuffer() })
          })
        }
      })
      base = `http://127.0.0.1:${server.port}`
    }, 60_000)
    afterAll(async () => {
      server.stop(true)
      await app.dispose()
    })

    const ship = async (args: ReadonlyArray<string>, stdin?: Uint8Array, key = "") => {
      const child = Bun.spawn(["bun", "src/app/cli.ts", "ship", ...args], {
        stdin: stdin ?? "ignore",
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, AIV_API_KEY: key }
      })
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
      return { out, err, code }
    }
    const accepted = (out: string) => Number(/accepted (\d+)/.exec(out)?.[1] ?? NaN)
    const used = async () => {
      const response = await app.fetch("/api/public/v1/agents/ingest", {
        method: "POST",
        headers: { ...bearer(t.key), "content-type": "application/json" },
        body: JSON.stringify({ site_id: t.siteId, records: [] })
      })
      return ((await json(response)) as { monthly_used: number }).monthly_used
    }

    it("a gzip file shipped twice is stored once (ids from the content)", async () => {
      const file = join(dir, `access-${backend}.log.gz`)
      writeFileSync(file, gzipSync(combinedLog(2500, `twice-${backend}`)))
      const before = await used()
      const first = await ship([file, "--site", t.siteId, "--key", t.key, "--url", base, "--batch", "700"])
      expect(first.err).toContain("lines")
      expect(first.code).toBe(0)
      expect(first.out).toContain("scanned 2502")
      expect(accepted(first.out)).toBe(CRAWLER_LINES(2500))
      expect(first.out).toContain("combined 2502")
      const second = await ship([file, "--site", t.siteId, "--key", t.key, "--url", base])
      expect(second.code).toBe(0)
      expect(accepted(second.out)).toBe(0)
      expect(second.out).toContain("skipped 2502")
      expect(await used()).toBe(before + CRAWLER_LINES(2500))
    }, 60_000)

    it("reads standard input with -", async () => {
      const before = await used()
      const body = new TextEncoder().encode(sourceBody("cloudfront", sourceRecords("cloudfront")))
      // The key from AIV_API_KEY, as the README says (--key would add its note on standard error).
      const run = await ship(["-", "--site", t.siteId, "--url", base, "--quiet"], body, t.key)
      expect(run.code).toBe(0)
      expect(run.err).toBe("")
      expect(accepted(run.out)).toBe(2)
      expect(run.out).toContain("scanned 5")
      expect(await used()).toBe(before + 2)
    }, 60_000)

    it("a wrong key stops at once with a clear message, exit 1", async () => {
      const file = join(dir, `small-${backend}.log`)
      writeFileSync(file, combinedLog(30, "wrongkey"))
      const run = await ship([file, "--site", t.siteId, "--key", "aivkey_wrong", "--url", base])
      expect(run.code).toBe(1)
      expect(run.err).toContain("stopped: 401")
    }, 60_000)

    it("a gzip file cut short: the lines before the cut are stored, the file is named, exit 1", async () => {
      const whole = gzipSync(combinedLog(3000, `cut-${backend}`))
      const file = join(dir, `cut-${backend}.log.gz`)
      writeFileSync(file, whole.subarray(0, Math.floor(whole.length * 0.6)))
      const run = await ship([file, "--site", t.siteId, "--key", t.key, "--url", base])
      expect(run.code).toBe(1)
      expect(run.err).toContain(`cut-${backend}.log.gz`)
      const stored = accepted(run.out)
      expect(stored).toBeGreaterThan(50)
      expect(stored).toBeLessThan(CRAWLER_LINES(3000))
      // The whole file afterwards stores exactly the rest.
      const full = join(dir, `full-${backend}.log.gz`)
      writeFileSync(full, whole)
      const rest = await ship([full, "--site", t.siteId, "--key", t.key, "--url", base])
      expect(rest.code).toBe(0)
      expect(accepted(rest.out)).toBe(CRAWLER_LINES(3000) - stored)
    }, 60_000)
  })
}

describe("ship: arguments, retries and stops", () => {
  const io = (answers: Array<() => Response>, calls: Array<unknown>): ShipIo => ({
    stdin: async function*() {},
    fetch: async (_url, init) => {
      calls.push(JSON.parse(String(init.body)))
      const next = answers.shift()
      if (next === undefined) throw new Error("connection refused")
      return next()
    },
    err: Object.assign(new PassThrough(), { isTTY: false }),
    out: () => undefined,
    sleep: async () => undefined,
    retryBaseMs: 1,
    maxAttempts: 4
  })
  const ok = () => Response.json({ accepted: 1, monthly_used: 1, monthly_cap: 100 })
  const file = join(dir, "one.log")
  writeFileSync(file, combinedLog(5, "retry"))
  const options = parseShipArgs([file, "--site", "s", "--key", "k", "--url", "http://x", "--quiet"], {})

  it("usage errors name what is missing", () => {
    expect(() => parseShipArgs([file], {})).toThrow(ShipUsageError)
    expect(() => parseShipArgs([file, "--site", "s"], {})).toThrow("--key is required")
    expect(() => parseShipArgs([file, "--site", "s", "--key", "k", "--format", "syslog"], {})).toThrow("unknown format")
    expect(() => parseShipArgs([file, "--site", "s", "--key", "k", "--batch", "2001"], {})).toThrow("--batch")
    expect(parseShipArgs([file, "--site=s"], { AIV_API_KEY: "k" }).key).toBe("k")
  })

  it("retries 503, 429 (rate limit) and network errors with backoff, then succeeds", async () => {
    const calls: Array<unknown> = []
    const answers = [
      () => new Response("{}", { status: 503 }),
      () => Response.json({ error: "too many requests" }, { status: 429, headers: { "retry-after": "0" } }),
      ok
    ]
    const summary = await runShip(options, io(answers, calls))
    expect(summary.failures).toEqual([])
    expect(summary.accepted).toBe(1)
    expect(calls.length).toBe(3)
    expect(calls[0]).toEqual(calls[2])
  })

  it("stops on the monthly cap with a clear message, without retrying", async () => {
    const calls: Array<unknown> = []
    const summary = await runShip(options, io([() => Response.json({ error: "monthly server-log event cap reached", monthly_used: 100, monthly_cap: 100 }, { status: 429 })], calls))
    expect(calls.length).toBe(1)
    expect(summary.failures.join("")).toContain("monthly cap is reached (100/100)")
  })

  it("sends the requests the catalog recognises and AI referrals; --all sends every request with a User-Agent", async () => {
    const mixed = join(dir, "mixed.log")
    const t0 = Date.now() - 60_000
    writeFileSync(mixed, [
      `203.0.113.1 - - [${clf(t0)}] "GET /a HTTP/1.1" 200 1 "-" "${UA.gptbot}"`,
      `203.0.113.2 - - [${clf(t0)}] "GET /b HTTP/1.1" 200 1 "-" "${UA.chrome}"`,
      `203.0.113.3 - - [${clf(t0)}] "GET /c HTTP/1.1" 200 1 "https://chatgpt.com/" "${UA.safari}"`,
      `203.0.113.4 - - [${clf(t0)}] "GET /d HTTP/1.1" 200 1 "-" "-"`
    ].join("\n") + "\n")
    const sent = async (extra: ReadonlyArray<string>) => {
      const calls: Array<{ records: Array<{ path: string }> }> = []
      await runShip(parseShipArgs([mixed, "--site", "s", "--key", "k", "--quiet", ...extra], {}), io([ok], calls as Array<unknown>))
      return calls[0]!.records.map((r) => r.path)
    }
    expect(await sent([])).toEqual(["/a", "/c"])
    expect(await sent(["--all"])).toEqual(["/a", "/b", "/c"])
  })

  it("gives up after the last attempt", async () => {
    const calls: Array<unknown> = []
    const summary = await runShip(options, io([], calls))
    expect(calls.length).toBe(4)
    expect(summary.failures.join("")).toContain("failed 4 times")
  })
})

describe("ship: Vercel records without an id", () => {
  it("are keyed by their line, the same on every run", async () => {
    const file = join(dir, "vercel.ndjson")
    const ts = Date.now() - 60_000
    const record = (path: string) => JSON.stringify({ source: "static", timestamp: ts, proxy: { timestamp: ts, method: "GET", host: "www.acme.com", path, userAgent: [UA.gptbot] } })
    writeFileSync(file, [record("/v1"), record("/v2"), record("/v1")].join("\n") + "\n")
    const ids = async () => {
      const calls: Array<{ records: Array<{ id: string }> }> = []
      const io: ShipIo = {
        stdin: async function*() {},
        fetch: async (_url, init) => {
          calls.push(JSON.parse(String(init.body)))
          return Response.json({ accepted: 0, monthly_used: 0, monthly_cap: 1 })
        },
        err: Object.assign(new PassThrough(), { isTTY: false }),
        out: () => undefined,
        sleep: async () => undefined,
        retryBaseMs: 1,
        maxAttempts: 1
      }
      await runShip(parseShipArgs([file, "--site", "s", "--key", "k", "--quiet"], {}), io)
      return calls[0]!.records.map((r) => r.id)
    }
    const first = await ids()
    expect(first.length).toBe(3)
    expect(new Set(first).size).toBe(3)
    expect(await ids()).toEqual(first)
  })
})
