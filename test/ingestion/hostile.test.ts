import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { LogDecoder } from "../../src/ingestion/formats/index.js"
import type { LogRequest } from "../../src/ingestion/Records.js"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { drainUrl, gzip, postBatch, postDrain, tenant, UA } from "./fixtures.js"

/**
 * Log bodies built to hurt (docs/security.md, "Log bodies"): lines whose parse could cost more than
 * their length (an unclosed quote of 250,000 characters, runs of backslashes) and values nested
 * 200,000 deep. The cost stays linear in the input, the answer is prompt, and never a 500.
 */
const LONG = 250_000
const TIME = "[10/Oct/2026:13:55:36 -0700]"
/** Combined-log lines that are not whole: what a backtracking line pattern chokes on. */
const hostileLines = (n: number): ReadonlyArray<string> => [
  `203.0.113.7 - - ${TIME} "GET /${"a".repeat(n)}`,
  `203.0.113.7 - - ${TIME} "GET / HTTP/1.1" 200 1 "${"a".repeat(n)}`,
  `203.0.113.7 - - ${TIME} "${"\\\\".repeat(n / 2)}`,
  `203.0.113.7 - - ${TIME} "${"\\".repeat(n)}`
]
const hostileBody = (n: number, lines = 16) =>
  Array.from({ length: lines }, (_, i) => hostileLines(n)[i % 4]).join("\n") + "\n"

const decodeOnce = (text: string) => {
  const started = performance.now()
  new LogDecoder("auto", Date.now()).text(text, [])
  return performance.now() - started
}

/** The best of alternating runs (after a warm-up): the decode's own cost, not the machine's noise. */
const bestOf = (small: string, large: string) => {
  decodeOnce(large)
  let bestSmall = Infinity
  let bestLarge = Infinity
  for (let run = 0; run < 7; run++) {
    bestSmall = Math.min(bestSmall, decodeOnce(small))
    bestLarge = Math.min(bestLarge, decodeOnce(large))
  }
  return { small: bestSmall, large: bestLarge }
}

describe("the combined-log line parser", () => {
  it("costs time linear in the line: four times the length, at most about four times the work", () => {
    const { small, large } = bestOf(hostileBody(LONG / 4), hostileBody(LONG))
    // Linear work gives about 4; a generous bound for a shared, loaded machine (and a floor of 4 ms
    // for the timer's noise), well below the ~50 the backtracking pattern gave.
    expect(large).toBeLessThan(15 * Math.max(small, 4))
    // 16 lines of 250,000 characters (4 MB of text) in well under a second.
    expect(large).toBeLessThan(1000)
  })

  it("reads the same lines, whole, as before: the closed fields and the optional tail", () => {
    const out: Array<LogRequest> = []
    const decoder = new LogDecoder("combined", Date.UTC(2026, 9, 11))
    decoder.text([
      `203.0.113.7 - - ${TIME} "GET /a HTTP/1.1" 200 1 "https://r.example/" "${UA.gptbot}" "extra"`,
      `203.0.113.7 - - ${TIME} "GET /b HTTP/1.1" 404 1`,
      `203.0.113.7 - - ${TIME} "GET /c HTTP/1.1" 200 1 "-" "unclosed`
    ].join("\n"), out)
    expect(decoder.scanned).toBe(3)
    expect(out.map((r) => [r.path, r.status, r.referrer, r.ua])).toEqual([
      ["/a", 200, "https://r.example/", UA.gptbot],
      ["/b", 404, "", ""],
      ["/c", 200, "", ""]
    ])
  })
})

const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

for (const backend of backends) {
  describe(`hostile log bodies over HTTP on ${backend}`, () => {
    let app: TestApp

    beforeAll(async () => {
      app = await makeTestApp(backend, { ingest: { maxBodyBytes: 8 * 1024 * 1024, maxInflatedBytes: 16 * 1024 * 1024 } })
    }, 60_000)
    afterAll(() => app.dispose())

    it("16 lines of 250,000 characters without a closing quote (gzip): a prompt 200, and /healthz answers meanwhile", async () => {
      const t = await tenant(app, "growth")
      const body = gzip(hostileBody(LONG))
      const started = performance.now()
      const [response, health] = await Promise.all([
        postDrain(app, t.key, drainUrl(t.siteId), body),
        Bun.sleep(5).then(() => app.fetch("/healthz"))
      ])
      const elapsed = performance.now() - started
      expect(response.status).toBe(200)
      expect(health.status).toBe(200)
      expect(await json(response)).toMatchObject({ accepted: 0 })
      expect(elapsed).toBeLessThan(3000)
    })

    describe("values nested 200,000 deep: a 4xx or a skipped record, never a 500", () => {
      const DEPTH = 200_000
      const deep = "[".repeat(DEPTH) + "]".repeat(DEPTH)
      const ts = () => new Date(Date.now() - 3_600_000).toISOString()
      /** A Netlify traffic record without a request id (keyed by its content) carrying the nested value. */
      const record = (path: string) =>
        `{"log_type":"traffic","timestamp":"${ts()}","client_ip":"203.0.113.7","hostname":"www.acme.com","method":"GET",` +
        `"url":"${path}","status_code":200,"user_agent":"${UA.gptbot}","nested":${deep}}`

      it("in a drain delivered as one JSON array, as NDJSON, and as the whole body", async () => {
        const t = await tenant(app, "growth")
        for (const [body, accepted] of [[`[${record("/deep/array")}]`, 1], [record("/deep/line") + "\n", 1], [deep, 0]] as const) {
          const response = await postDrain(app, t.key, drainUrl(t.siteId), body)
          expect(response.status).toBe(200)
          expect(((await json(response)) as { accepted: number }).accepted).toBe(accepted)
        }
        const pages = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=7d`, { headers: bearer(t.key) })
        expect(((await json(pages)) as { pages: Array<{ path: string }> }).pages.map((p) => p.path).sort()).toEqual(["/deep/array", "/deep/line"])
      })

      it("in a batch record", async () => {
        const t = await tenant(app, "growth")
        const body = `{"site_id":"${t.siteId}","records":[{"ua":"${UA.gptbot}","path":"/deep/batch","nested":${deep}}]}`
        const response = await postBatch(app, t.key, body)
        expect(response.status).toBeLessThan(500)
      })
    })
  })
}
