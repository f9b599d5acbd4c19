import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { isGzip, makeDrainDecoder, parseRecords } from "../../src/ingestion/DrainDecoder.js"
import { batchTsToMs, canonicalPath, canonicalQuery, fromBatchRecord, hostOfTarget, referrerEngine, splitPath } from "../../src/ingestion/Records.js"
import { makeTestApp, type TestApp } from "../helpers/app.js"
import { array, buildRecord, drainUrl, functionOutput, gzip, MIXED, mixedDelivery, ndjson, postDrain, requestRecord, tenant, type Tenant, UA } from "./fixtures.js"
import { fromVercel } from "../../src/ingestion/formats/vercel.js"

/** The drain parser on its own: detection, record rules, bounds, and a fuzz that must never throw. */
const decoder = makeDrainDecoder({ maxInflatedBytes: 8 * 1024 * 1024 })
const NOW = Date.UTC(2026, 4, 23, 12)
const bytes = (text: string) => new TextEncoder().encode(text)

describe("detection (docs/ingestion.md)", () => {
  it("gzip by its magic bytes only", () => {
    expect(isGzip(gzip("x"))).toBe(true)
    expect(isGzip(bytes("[1]"))).toBe(false)
    expect(isGzip(new Uint8Array([0x1f]))).toBe(false)
  })
  it("array, NDJSON, a single object, NDJSON of arrays, one record a line with commas", () => {
    expect(parseRecords(`[{"a":1},{"a":2}]`)).toEqual([{ a: 1 }, { a: 2 }])
    expect(parseRecords(`{"a":1}\n{"a":2}\n`)).toEqual([{ a: 1 }, { a: 2 }])
    expect(parseRecords(`  {"a":1}  `)).toEqual([{ a: 1 }])
    expect(parseRecords(`[{"a":1}]\n[{"a":2},{"a":3}]`)).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }])
    expect(parseRecords(`[\n{"a":1},\n{"a":2},\n{"a":3`)).toEqual([{ a: 1 }, { a: 2 }])
    expect(parseRecords("")).toBeNull()
    expect(parseRecords("nope")).toBeNull()
  })
  it("the same delivery decodes the same in all four forms", () => {
    const records = mixedDelivery()
    const forms = [bytes(ndjson(records)), bytes(array(records)), gzip(ndjson(records)), gzip(array(records))]
    const results = forms.map((body) => decoder.decode(body, NOW))
    for (const result of results) {
      expect(result.scanned).toBe(MIXED.scanned)
      expect(result.requests.length).toBe(7)
      expect(result.unparseable).toBeNull()
    }
    expect(results[3]!.requests).toEqual(results[0]!.requests)
  })
})

describe("log-drain records (docs/ingestion.md)", () => {
  it("only a proxy with a method is a request", () => {
    expect(fromVercel(buildRecord(), NOW)).toBeNull()
    expect(fromVercel(functionOutput("edge"), NOW)).toBeNull()
    expect(fromVercel({ proxy: { path: "/" } }, NOW)).toBeNull()
    expect(fromVercel({ proxy: { method: "GET" } }, NOW)).toBeNull() // no path: nothing to show
    expect(fromVercel({ proxy: { method: "GET", path: "/" } }, NOW)).not.toBeNull()
  })
  it("reads userAgent as an array, prefers proxy.host, maps -1 to no status, allows a missing clientIp", () => {
    const r = fromVercel(requestRecord({ ua: UA.gptbot, status: -1, clientIp: null, path: "/a/b?c=d#frag", ts: NOW - 5 }), NOW)!
    expect(r).toMatchObject({ ua: UA.gptbot, host: "www.acme.com", status: null, clientIp: null, path: "/a/b", query: "c=d", ts: NOW - 5, country: null, method: "GET" })
    const noHost = fromVercel(requestRecord({ ua: UA.gptbot, proxyHost: null }), NOW)!
    expect(noHost.host).toBe("acme-git-main-acme.vercel.app")
    expect(fromVercel({ proxy: { method: "GET", path: "/", userAgent: "GPTBot/1.0" } }, NOW)!.ua).toBe("GPTBot/1.0")
    expect(fromVercel({ proxy: { method: "GET", path: "/", statusCode: 503 } }, NOW)!.status).toBe(503)
  })
  it("falls back to the record timestamp, then to the receive time", () => {
    expect(fromVercel({ timestamp: NOW - 9, proxy: { method: "GET", path: "/" } }, NOW)!.ts).toBe(NOW - 9)
    expect(fromVercel({ proxy: { method: "GET", path: "/", timestamp: "soon" } }, NOW)!.ts).toBe(NOW)
  })
})

describe("one canonical path (docs/ingestion.md, \"One page, one path\")", () => {
  it("normalises percent-encoding as RFC 3986 6.2.2 does", () => {
    for (const form of ["/café menu", "/caf%c3%a9%20menu", "/caf%C3%A9%20menu", "/caf%C3%a9 menu"]) {
      expect(canonicalPath(form)).toBe("/caf%C3%A9%20menu")
    }
    expect(canonicalPath("/%7Euser/%41%2f%2F")).toBe("/~user/A%2F%2F")
    expect(canonicalPath("/100%/x%zz")).toBe("/100%25/x%25zz")
    expect(canonicalPath('/a"b<c>d\\e{f}|^`[]')).toBe("/a%22b%3Cc%3Ed%5Ce%7Bf%7D%7C%5E%60%5B%5D")
    expect(canonicalPath("/\u{1F600}\ud800")).toBe("/%F0%9F%98%80%EF%BF%BD")
    expect(canonicalPath("docs/a+b;c=d:e@f!$&'()*,")).toBe("/docs/a+b;c=d:e@f!$&'()*,")
    expect(canonicalQuery("q=caf%c3%a9 x&next=/a?b")).toBe("q=caf%C3%A9%20x&next=/a?b")
  })
  it("keeps a canonical path as it is, and never cuts one inside an escape", () => {
    const plain = "/docs/getting-started/index.html"
    expect(canonicalPath(plain)).toBe(plain)
    const long = canonicalPath("/" + "é".repeat(2000))
    expect(long.length).toBeLessThanOrEqual(2048)
    expect(long.endsWith("%A9")).toBe(true)
  })
  it("an absolute-form target names its host", () => {
    expect(hostOfTarget("http://user@www.acme.com:8080/x?y")).toBe("www.acme.com:8080")
    expect(hostOfTarget("/x")).toBe("")
    expect(splitPath("HTTP://www.acme.com/a%7e b?c")).toEqual({ path: "/a~%20b", query: "c" })
  })
})

describe("batch records (docs/ingestion.md, docs/decisions.md)", () => {
  it("ts below 100000000000 is seconds, else milliseconds", () => {
    expect(batchTsToMs(1_779_264_000)).toBe(1_779_264_000_000)
    expect(batchTsToMs(1_779_264_000_123)).toBe(1_779_264_000_123)
    expect(fromBatchRecord({ ua: "x", path: "/", ts: 1_779_264_000 }, NOW)!.ts).toBe(1_779_264_000_000)
    expect(fromBatchRecord({ ua: "x", path: "/" }, NOW)!.ts).toBe(NOW)
  })
  it("ua and path are required; typed fields must have their type", () => {
    expect(fromBatchRecord({ path: "/" }, NOW)).toBeNull()
    expect(fromBatchRecord({ ua: "x" }, NOW)).toBeNull()
    expect(fromBatchRecord({ ua: "x", path: "/", status: "200" }, NOW)).toBeNull()
    expect(fromBatchRecord({ ua: "x", path: "/", ts: 5 }, NOW)).toBeNull() // 1970: not a request log
    expect(fromBatchRecord({ ua: "x", path: "/", ref: null, ip: null }, NOW)).not.toBeNull()
  })
  it("paths: full URLs, missing slash, NUL bytes escaped", () => {
    expect(splitPath("https://www.acme.com/a?b=1")).toEqual({ path: "/a", query: "b=1" })
    expect(splitPath("https://www.acme.com")).toEqual({ path: "/", query: "" })
    expect(splitPath("a/b")).toEqual({ path: "/a/b", query: "" })
    expect(splitPath("/a\u0000b")).toEqual({ path: "/a%00b", query: "" })
  })
})

describe("AI referrals (docs/agents.md)", () => {
  const cases: ReadonlyArray<[string, string | null]> = [
    ["https://chatgpt.com/", "chatgpt"],
    ["https://chat.openai.com/c/1", "chatgpt"],
    ["https://www.perplexity.ai/search?q=x", "perplexity"],
    ["https://gemini.google.com/app", "gemini"],
    ["https://copilot.microsoft.com/", "copilot"],
    ["https://claude.ai/chat/1", "claude"],
    ["https://grok.com/", "grok"],
    ["https://chat.deepseek.com/", "deepseek"],
    ["https://www.google.com/", null],
    ["https://notchatgpt.com/", null],
    ["chatgpt.com", null],
    ["", null]
  ]
  for (const [referrer, engine] of cases) {
    it(`${referrer || "(empty)"} -> ${engine}`, () => expect(referrerEngine(referrer)).toBe(engine))
  }
})

describe("bounds", () => {
  it("a gzip bomb stops at the inflation limit, in bounded memory", () => {
    const bomb = gzip(new Uint8Array(512 * 1024 * 1024))
    const before = process.memoryUsage().rss
    const result = decoder.decode(bomb, NOW)
    expect(result).toEqual({ scanned: 0, requests: [], unparseable: "inflates too large" })
    expect(process.memoryUsage().rss - before).toBeLessThan(128 * 1024 * 1024)
  })
  it("a gzip trailer that understates the inflated size changes nothing: the bound holds, the records are read", () => {
    const lying = (body: Uint8Array, size: number) => {
      const copy = Uint8Array.from(body)
      new DataView(copy.buffer).setUint32(copy.length - 4, size, true)
      return copy
    }
    const bomb = gzip(new Uint8Array(512 * 1024 * 1024))
    expect(decoder.decode(lying(bomb, 1000), NOW)).toEqual({ scanned: 0, requests: [], unparseable: "inflates too large" })
    // zlib checks the trailer at the end of the stream: a wrong size makes it a corrupt stream, as before.
    const honest = gzip(ndjson(mixedDelivery()))
    expect(decoder.decode(honest, NOW).unparseable).toBeNull()
    expect(decoder.decode(lying(honest, 100), NOW)).toEqual({ scanned: 0, requests: [], unparseable: "bad gzip" })
  })
  it("an unread (too large) body is unparseable", () => {
    expect(decoder.decode(null, NOW).unparseable).toBe("too large")
  })
})

// ---------------------------------------------------------------------------
// Fuzz: random, truncated and mutated bodies never throw, and never answer 5xx
// ---------------------------------------------------------------------------

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
const prng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const fuzzBodies = (seed: number, count: number): Array<Uint8Array> => {
  const rand = prng(seed)
  const samples = [bytes(ndjson(mixedDelivery())), bytes(array(mixedDelivery())), gzip(ndjson(mixedDelivery())), gzip(array(mixedDelivery()))]
  const out: Array<Uint8Array> = []
  for (let i = 0; i < count; i++) {
    const kind = i % 4
    if (kind === 0) {
      // random bytes, sometimes behind a gzip magic or a JSON opener
      const body = new Uint8Array(Math.floor(rand() * 512))
      for (let j = 0; j < body.length; j++) body[j] = Math.floor(rand() * 256)
      if (body.length > 2 && rand() < 0.3) body.set([0x1f, 0x8b])
      if (body.length > 1 && rand() < 0.3) body[0] = rand() < 0.5 ? 0x5b : 0x7b
      out.push(body)
    } else if (kind === 1) {
      // a real delivery cut anywhere
      const sample = samples[Math.floor(rand() * samples.length)]!
      out.push(sample.slice(0, Math.floor(rand() * sample.length)))
    } else if (kind === 2) {
      // a real delivery with bytes flipped
      const sample = samples[Math.floor(rand() * samples.length)]!.slice()
      for (let k = 0; k < 1 + Math.floor(rand() * 8); k++) sample[Math.floor(rand() * sample.length)] = Math.floor(rand() * 256)
      out.push(sample)
    } else {
      // JSON of the wrong shapes
      const shapes = [
        `{"proxy":null}`, `[{"proxy":{"method":1,"path":[]}}]`, `[1,"a",null,true,{}]`, `{"proxy":{"method":"GET","path":"/","userAgent":[null,5,{}]}}`,
        `[{"proxy":{"method":"GET","path":"/x","userAgent":["GPTBot/1.0"],"timestamp":1e300,"statusCode":1e9}}]`,
        `${"[".repeat(5000)}${"]".repeat(5000)}`, `{"proxy":{"method":"GET","path":"/\\u0000","userAgent":["GPTBot/1.0"],"clientIp":"\\u0000"}}`
      ]
      out.push(bytes(shapes[Math.floor(rand() * shapes.length)]!))
    }
  }
  return out
}

describe("fuzz", () => {
  it("the decoder never throws on 4000 random, truncated and mutated bodies", () => {
    for (const body of fuzzBodies(20260523, 4000)) {
      const result = decoder.decode(body, NOW)
      expect(result.requests.length).toBeLessThanOrEqual(result.scanned)
      expect(result.scanned).toBeGreaterThanOrEqual(0)
    }
  })

  describe("over HTTP", () => {
    let app: TestApp
    let t: Tenant
    beforeAll(async () => {
      app = await makeTestApp("pglite")
      t = await tenant(app, "growth")
    }, 60_000)
    afterAll(() => app.dispose())

    it("the drain answers 200 to every one of 300 fuzzed bodies", async () => {
      for (const body of fuzzBodies(77, 300)) {
        const response = await postDrain(app, t.key, drainUrl(t.siteId), body)
        if (response.status !== 200) throw new Error(`status ${response.status} for body ${Buffer.from(body).toString("base64")}: ${await response.text()}`)
        const out = (await response.json()) as { accepted: number; scanned: number; skipped: number }
        expect(out.accepted).toBeLessThanOrEqual(out.scanned)
      }
    }, 60_000)
  })
})
