import { describe, expect, it } from "bun:test"
import { LogDecoder } from "../../src/ingestion/formats/index.js"
import type { LogFormat } from "../../src/ingestion/formats/index.js"
import type { LogRequest } from "../../src/ingestion/Records.js"
import { array, MIXED, mixedDelivery, ndjson, requestRecord, UA } from "./fixtures.js"
import { FORMATS, sourceBody, sourceRecords } from "./sources.js"

/**
 * A body's bytes read line by line (LogDecoder.bytes, what the drain runs) give what its whole text
 * gives (LogDecoder.text): the same requests with the same record keys, the same counts, the same
 * format, whatever the shape of the body, its byte order mark, broken UTF-8 or a cut-off end.
 */
const NOW = Date.UTC(2026, 10, 27, 12)
const encode = (text: string) => new TextEncoder().encode(text)
const concat = (...parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
const BOM = new Uint8Array([0xef, 0xbb, 0xbf])

const read = (format: LogFormat, run: (decoder: LogDecoder, out: Array<LogRequest>) => void) => {
  const decoder = new LogDecoder(format, NOW)
  const out: Array<LogRequest> = []
  run(decoder, out)
  return { out, scanned: decoder.scanned, parsed: decoder.parsed, byFormat: decoder.byFormat, readAs: decoder.readAs() }
}

const expectSame = (body: Uint8Array, format: LogFormat = "auto", partialTail = false) => {
  const byLines = read(format, (d, out) => d.bytes(body, out, partialTail))
  const whole = read(format, (d, out) => d.text(new TextDecoder("utf-8").decode(body), out, partialTail))
  expect(byLines).toEqual(whole)
  return byLines
}

const records = mixedDelivery()
const hit = (path: string) => JSON.stringify(requestRecord({ ua: UA.gptbot, path }))

describe("a body read a line at a time reads as its whole text", () => {
  it("NDJSON, a JSON array on one line, pretty-printed, one record a line with commas, a single object", () => {
    expect(expectSame(encode(ndjson(records))).out.length).toBe(7)
    expect(expectSame(encode(array(records))).out.length).toBe(7)
    expect(expectSame(encode(JSON.stringify(records, null, 2))).out.length).toBe(7)
    expect(expectSame(encode(`[\n${records.map((r) => JSON.stringify(r)).join(",\n")}\n]\n`)).out.length).toBe(7)
    expectSame(encode(`  ${hit("/one")}  \n\n`))
    expectSame(encode(`[${hit("/a")}]\n[${hit("/b")},${hit("/c")}]\n`))
  })

  it("every log source, auto-detected and forced, CRLF line ends, blank and damaged lines", () => {
    for (const format of FORMATS) {
      const body = sourceBody(format, sourceRecords(format, NOW - 60_000))
      const auto = expectSame(encode(body))
      expect(auto.out.length).toBeGreaterThan(0)
      expectSame(encode(body), format)
      expectSame(encode(body.replaceAll("\n", "\r\n")))
      expectSame(encode(`\n\n${body}\n   \n{"broken": \n${body}`))
    }
  })

  it("a byte order mark at the start or inside, broken and multi-byte UTF-8", () => {
    expectSame(concat(BOM, encode(ndjson(records))))
    expectSame(concat(BOM, encode(JSON.stringify(records, null, 2))))
    expectSame(concat(encode(ndjson(records.slice(0, 3))), BOM, encode(ndjson(records.slice(3)))))
    const accented = hit("/caf\u00e9/\u65e5\u672c/\u{1f600}")
    expectSame(encode(`${accented}\n${accented}\n`))
    // A lone continuation byte, a sequence cut by the line end, and one cut by the body's end.
    const broken = concat(encode(hit("/x")), new Uint8Array([0x80, 0x0a, 0xe6, 0x97]), encode(`\n${hit("/y")}\n`), new Uint8Array([0xf0, 0x9f]))
    expectSame(broken)
  })

  it("a body of many pieces (it is decoded some 64 KB at a time): lines across every boundary", () => {
    const many = Array.from({ length: 1500 }, (_, i) => hit(`/p${i}/caf\u00e9-\u65e5\u672c-${"x".repeat(i % 300)}`))
    const body = encode(`${many.join("\n")}\n`)
    expect(body.length).toBeGreaterThan(4 * 64 * 1024)
    expect(expectSame(body).out.length).toBe(1500)
    expectSame(encode(`${many.join("\r\n")}\r\n\n\n`))
    expectSame(concat(encode(`${many.slice(0, 700).join("\n")}\n`), BOM, encode(many.slice(700).join("\n"))))
    for (const cut of [body.length - 1, 200_000, 65_536, 65_537]) expectSame(body.subarray(0, cut), "auto", true)
    // One line longer than a piece, between ordinary ones.
    expectSame(encode(`${many[0]}\n${hit(`/${"y".repeat(100_000)}`)}\n${many[1]}\n`))
  })

  it("a cut-off body drops its unfinished last line either way", () => {
    const body = encode(ndjson(records))
    for (const cut of [body.length - 1, body.length - 40, 1, 0]) {
      expectSame(body.subarray(0, cut), "auto", true)
    }
    expect(expectSame(body.subarray(0, body.length - 40), "auto", true).scanned).toBe(MIXED.scanned - 1)
  })

  it("an empty body, whitespace only, one value alone, a value and then only whitespace", () => {
    expectSame(new Uint8Array(0))
    expectSame(encode(" \n\t\r\n"))
    expectSame(encode("[]"))
    expectSame(encode(`${hit("/only")}\n\n  \n`))
    expectSame(encode(`{"a":1}\n`))
    // A record keyed by its content (no RayID): as one document it has no line, so its key comes from its fields.
    const line = sourceBody("cloudflare", sourceRecords("cloudflare", NOW - 60_000)).split("\n")[0]!
    const noRay = line.replace(/,?"RayID":"[^"]*"/, "")
    expect(noRay).not.toContain("RayID")
    expect(expectSame(encode(`${noRay}\n  \n`)).out.length).toBe(1)
  })
})
