/**
 * Fuzz: 100,000 drain bodies from a seeded generator (mulberry32, SEED) posted to a real
 * server; not one may answer 5xx. Bodies: valid records with fields of the wrong type, truncated
 * and bit-flipped JSON, NDJSON with junk lines, deep nesting, huge numbers and strings, unicode,
 * gzip of all of these, truncated and corrupt gzip, random bytes.
 *
 *   bun run bench/fuzz.ts          (COUNT 100000, SEED 9, CONCURRENCY 32; PostgreSQL at 127.0.0.1:5432)
 */
import { gzipSync } from "node:zlib"
import { freshDatabase, GPTBOT, loadAverage, peakRssMiB, seedAccount, startServer } from "./support.js"

const count = Math.min(1_000_000, Number(process.env.COUNT ?? 100_000))
const seed = Number(process.env.SEED ?? 9)
const concurrency = Number(process.env.CONCURRENCY ?? 32)
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const mulberry32 = (a: number) => () => {
  a |= 0
  a = (a + 0x6d2b79f5) | 0
  let t = Math.imul(a ^ (a >>> 15), 1 | a)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const rnd = mulberry32(seed)
const int = (n: number) => Math.floor(rnd() * n)
const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!

const weird: ReadonlyArray<unknown> = [
  null, true, false, 0, -1, 1e308, -1e308, 2 ** 53 + 1, 1.5, "", " ", "\u0000", "\ud800", "é", "🤖".repeat(50), "x".repeat(5000),
  [], {}, [[[]]], { a: { b: { c: {} } } }, "GPTBot", [GPTBOT], [null], [1, 2], "-1", "NaN", "1e999", "<script>", "../../etc/passwd"
]
const value = (): unknown => (rnd() < 0.7 ? pick(weird) : int(1000))
const record = (): Record<string, unknown> => {
  const proxy: Record<string, unknown> = {
    timestamp: rnd() < 0.8 ? Date.now() - int(86_400_000) : value(),
    method: rnd() < 0.8 ? pick(["GET", "POST", "HEAD"]) : value(),
    host: rnd() < 0.8 ? "acme.example" : value(),
    path: rnd() < 0.8 ? `/p/${int(1000)}?q=${int(9)}` : value(),
    userAgent: rnd() < 0.7 ? [pick([GPTBOT, "Mozilla/5.0 Chrome/124", "ClaudeBot/1.0", ""])] : value(),
    statusCode: rnd() < 0.8 ? pick([200, 404, 500, -1]) : value(),
    clientIp: rnd() < 0.8 ? "198.51.100.7" : value(),
    referer: rnd() < 0.5 ? "https://chatgpt.com/" : value()
  }
  for (const k of Object.keys(proxy)) if (rnd() < 0.1) delete proxy[k]
  const r: Record<string, unknown> = { id: rnd() < 0.9 ? `z${int(1e9)}` : value(), source: rnd() < 0.8 ? "lambda" : value(), proxy: rnd() < 0.9 ? proxy : value() }
  if (rnd() < 0.05) r.timestamp = value()
  return r
}
const deep = (depth: number): string => "[".repeat(depth) + "]".repeat(rnd() < 0.5 ? depth : int(depth))
const corrupt = (bytes: Uint8Array) => {
  const out = bytes.slice()
  for (let i = 0; i < 1 + int(8); i++) if (out.length > 0) out[int(out.length)] = int(256)
  return out
}
const body = (): Uint8Array | string => {
  const records = Array.from({ length: 1 + int(30) }, record)
  const enc = new TextEncoder()
  switch (int(12)) {
    case 0: return JSON.stringify(records)
    case 1: return records.map((r) => JSON.stringify(r)).join(rnd() < 0.5 ? "\n" : "\r\n")
    case 2: return JSON.stringify(records).slice(0, int(2000))
    case 3: return records.map((r) => (rnd() < 0.3 ? "{junk" : JSON.stringify(r))).join("\n") + ",\n"
    case 4: return deep(1 + int(20_000))
    case 5: return corrupt(enc.encode(JSON.stringify(records)))
    case 6: return gzipSync(JSON.stringify(records))
    case 7: return gzipSync(records.map((r) => JSON.stringify(r)).join("\n")).subarray(0, 10 + int(200))
    case 8: return corrupt(gzipSync(JSON.stringify(records)))
    case 9: return crypto.getRandomValues(new Uint8Array(int(4096)))
    case 10: return JSON.stringify(pick(weird))
    default: return new Uint8Array([0x1f, 0x8b, ...crypto.getRandomValues(new Uint8Array(int(64)))])
  }
}

const db = await freshDatabase(adminUrl, "aiv_fuzz")
const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: "memory://" }, 18433)
try {
  const { key, sites } = await seedAccount(server.base, db.url, 1)
  const target = `${server.base}/api/public/v1/agents/ingest/drain?site_id=${sites[0]!.siteId}`
  const statuses = new Map<number | string, number>()
  const examples: Array<string> = []
  let next = 0
  const started = performance.now()
  const worker = async () => {
    while (next < count) {
      next++
      const payload = body()
      let status: number | string
      try {
        const response = await fetch(target, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: payload as unknown as BodyInit })
        status = response.status
        const text = await response.text()
        if (status >= 500 && examples.length < 5) examples.push(`${status} ${text.slice(0, 100)} <- ${String(payload).slice(0, 100)}`)
      } catch (error) {
        status = `network: ${(error as Error).message.slice(0, 40)}`
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const seconds = (performance.now() - started) / 1000
  const fivexx = [...statuses].filter(([s]) => typeof s === "number" && s >= 500).reduce((a, [, n]) => a + n, 0)
  const network = [...statuses].filter(([s]) => typeof s === "string").reduce((a, [, n]) => a + n, 0)
  console.log(`fuzz: ${count} drain bodies (seed ${seed}) in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  console.log(`  5xx: ${fivexx}; network errors: ${network}; server peak RSS ${(await peakRssMiB(server.proc.pid)).toFixed(0)} MiB; load average ${await loadAverage()}`)
  for (const e of examples) console.log(`  e.g. ${e}`)
  if (fivexx + network > 0) process.exitCode = 1
} finally {
  await server.stop()
  await db.drop()
}
