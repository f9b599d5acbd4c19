/**
 * User-Agent classification benchmark: 1,000,000 mixed User-Agents (80% browsers, 20% bots, built from
 * the labelled fixture with varied version numbers), classified on one core by the real classifier and,
 * in the same run, by a naive loop (lower-case the UA, then includes/test every pattern in turn).
 *
 *   bun run bench/classify.ts [count]
 *
 * Targets: >= 2,000,000 classifications/s and >= 5x the naive loop.
 */
import fixture from "../test/catalog/fixtures/user-agents.json"
import { type Classification, literalRuns, loadCatalog, makeClassifier } from "../src/catalog/Classifier.js"

const N = Number(process.argv[2] ?? 1_000_000)
const TARGET_RATE = 2_000_000
const TARGET_RATIO = 5

// --- deterministic PRNG (mulberry32) so every run classifies the same strings
let seed = 0x5eed
const rand = () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rand() * xs.length)]!

interface Row {
  readonly ua: string
  readonly bot: string | null
}
const rows = fixture as ReadonlyArray<Row>
const isBrowser = (ua: string) =>
  /^Mozilla\/5\.0 \(/.test(ua) && !/bot|spider|crawl|compatible|https?:|lighthouse|headless|monitor|synthetic|ptst|gtmetrix/i.test(ua)
const browsers = rows.filter((r) => r.bot === null && isBrowser(r.ua)).map((r) => r.ua)
const bots = rows.filter((r) => r.bot !== null || !isBrowser(r.ua)).map((r) => r.ua)

// Vary version numbers: Chrome/131.0.0.0 -> Chrome/127.0.6533.88, Firefox/133.0 -> Firefox/129.0, ...
const vary = (ua: string): string =>
  ua.replace(/\/(\d+)((?:\.\d+)*)/g, (_m, major: string, rest: string) => {
    const m = Math.max(0, Number(major) + Math.floor(rand() * 9) - 4)
    const parts = rest.split(".").slice(1).map(() => String(Math.floor(rand() * (rand() < 0.5 ? 10 : 7000))))
    return `/${m}${parts.length > 0 ? "." + parts.join(".") : ""}`
  })

const t0 = performance.now()
const uas: Array<string> = new Array(N)
for (let i = 0; i < N; i++) uas[i] = vary(rand() < 0.8 ? pick(browsers) : pick(bots))
const genMs = performance.now() - t0

const agents = loadCatalog().agents
const classify = makeClassifier(agents)

// The naive loop: lower-case, then every pattern of every agent in catalog order, first hit wins.
// A pattern whose source is a plain token is checked with includes, any other with its RegExp.
type Check = { readonly lit: string | null; readonly re: RegExp; readonly c: Classification }
const checks: Array<Check> = []
for (const a of agents) {
  if (a.robots_only === true) continue
  const c: Classification = { bot: a.bot, vendor: a.vendor, kind: a.kind }
  for (const p of a.patterns) {
    const runs = literalRuns(p)
    const plain = runs.length === 1 && runs[0]!.length === p.length ? runs[0]!.toLowerCase() : null
    checks.push({ lit: plain, re: new RegExp(p, "i"), c })
  }
}
const naive = (ua: string): Classification | null => {
  const lower = ua.toLowerCase()
  for (let i = 0; i < checks.length; i++) {
    const k = checks[i]!
    if (k.lit !== null ? lower.includes(k.lit) : k.re.test(lower)) return k.c
  }
  return null
}

const run = (f: (ua: string) => Classification | null, from: number, to: number): number => {
  let hits = 0
  for (let i = from; i < to; i++) if (f(uas[i]!) !== null) hits++
  return hits
}
const measure = (name: string, f: (ua: string) => Classification | null) => {
  run(f, 0, Math.min(N, 50_000)) // warm-up (JIT)
  const start = Bun.nanoseconds()
  const hits = run(f, 0, N)
  const secs = (Bun.nanoseconds() - start) / 1e9
  return { name, hits, secs, rate: N / secs }
}

const real = measure("classifier (prefilter + combined RegExp)", classify)
const base = measure("naive loop (lower-case + includes/test)", naive)

// Sanity: both agree on crawler vs not crawler on every string.
let disagree = 0
for (let i = 0; i < N; i += 97) if ((classify(uas[i]!) === null) !== (naive(uas[i]!) === null)) disagree++

const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
console.log(`User-Agents: ${fmt(N)} (80% browsers from ${browsers.length} templates, 20% bots from ${bots.length}); patterns: ${checks.length}; generated in ${genMs.toFixed(0)} ms`)
for (const r of [real, base]) {
  console.log(`${r.name.padEnd(44)} ${fmt(r.rate).padStart(12)} /s  (${(r.secs * 1000).toFixed(0)} ms, ${fmt(r.hits)} AI hits, ${((r.secs * 1e9) / N).toFixed(0)} ns/UA)`)
}
const ratio = real.rate / base.rate
console.log(`ratio: ${ratio.toFixed(1)}x   sampled disagreements crawler/not: ${disagree}`)
const ok = real.rate >= TARGET_RATE && ratio >= TARGET_RATIO
console.log(`targets: >= ${fmt(TARGET_RATE)}/s and >= ${TARGET_RATIO}x -> ${ok ? "met" : "NOT met"}`)
if (!ok) process.exitCode = 1
