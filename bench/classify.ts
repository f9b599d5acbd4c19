/**
 * User-Agent classification benchmark: 1,000,000 mixed User-Agents (80% browsers, 20% bots, built from
 * the labelled fixture with varied version numbers), classified on one core with each hit's verification
 * methods looked up (as ingestion does), by the real classifier and, in the same run, by two baselines:
 *
 * - combined RegExp: the strongest simple implementation, one case-insensitive alternation of every
 *   pattern (what isbot does), then on a hit the first agent in catalog order whose pattern matches;
 * - naive loop: lower-case the UA, then includes/test every pattern in turn (on a tenth of each slice).
 *
 * Rounds alternate the order of the contenders, each round on another slice of the strings; the figures
 * are the medians of the rounds. Pin it to one core on a shared machine:
 *
 *   taskset -c 1 bun run bench/classify.ts [count] [rounds]
 *
 * Targets: >= 2,000,000 classifications/s, faster than the combined RegExp and >= 5x the naive loop.
 */
import fixture from "../test/catalog/fixtures/user-agents.json"
import { type Classification, literalRuns, loadCatalog, makeClassifier } from "../src/catalog/Classifier.js"
import { bundledMethods } from "../src/verification/Methods.js"

const N = Number(process.argv[2] ?? 1_000_000)
const ROUNDS = Number(process.argv[3] ?? 5)
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
const methods = bundledMethods()

// Baselines share these: every pattern of every agent in catalog order.
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
const anyPattern = new RegExp(checks.map((k) => `(?:${k.re.source})`).join("|"), "i")
const combined = (ua: string): Classification | null => {
  if (!anyPattern.test(ua)) return null
  for (let i = 0; i < checks.length; i++) if (checks[i]!.re.test(ua)) return checks[i]!.c
  return null
}

interface Contender {
  readonly name: string
  readonly f: (ua: string) => Classification | null
  /** Share of each round's slice it classifies (the naive loop is slow). */
  readonly share: number
  readonly rates: Array<number>
  hits: number
}
const contenders: Array<Contender> = [
  { name: "classifier (literal automaton + sticky RegExps)", f: classify, share: 1, rates: [], hits: 0 },
  { name: "combined RegExp (one alternation, isbot-style)", f: combined, share: 1, rates: [], hits: 0 },
  { name: "naive loop (lower-case + includes/test)", f: naive, share: 0.1, rates: [], hits: 0 },
]

/** Classifies uas[from, to) and attaches the methods of each hit; returns the hits (and keeps the work alive). */
let sink = 0
const run = (f: (ua: string) => Classification | null, from: number, to: number): number => {
  let hits = 0
  for (let i = from; i < to; i++) {
    const c = f(uas[i]!)
    if (c !== null) {
      hits++
      sink += methods.get(c.bot)?.length ?? 0
    }
  }
  return hits
}

for (const c of contenders) run(c.f, 0, Math.min(N, 50_000)) // warm-up (JIT)
const slice = Math.floor(N / ROUNDS)
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? contenders : [...contenders].reverse()
  for (const c of order) {
    const from = r * slice
    const to = from + Math.max(1, Math.floor(slice * c.share))
    const start = Bun.nanoseconds()
    c.hits += run(c.f, from, to)
    c.rates.push((to - from) / ((Bun.nanoseconds() - start) / 1e9))
  }
}

// Sanity: the classifier and the combined RegExp agree on crawler vs not crawler on every string.
let disagree = 0
for (let i = 0; i < N; i++) if ((classify(uas[i]!) === null) !== (combined(uas[i]!) === null)) disagree++

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
console.log(
  `User-Agents: ${fmt(N)} (80% browsers from ${browsers.length} templates, 20% bots from ${bots.length}); patterns: ${checks.length}; ` +
    `${ROUNDS} alternating rounds of ${fmt(slice)}; generated in ${genMs.toFixed(0)} ms`,
)
for (const c of contenders) {
  const m = median(c.rates)
  console.log(
    `${c.name.padEnd(50)} median ${fmt(m).padStart(11)} /s  ${(1e9 / m).toFixed(0).padStart(6)} ns/UA  ` +
      `rounds: ${c.rates.map((x) => fmt(x)).join(", ")}  (${fmt(c.hits)} AI hits)`,
  )
}
const [real, strong, weak] = contenders.map((c) => median(c.rates)) as [number, number, number]
console.log(
  `ratio vs combined RegExp: ${(real / strong).toFixed(1)}x   vs naive loop: ${(real / weak).toFixed(1)}x   ` +
    `crawler/not disagreements with the combined RegExp: ${disagree}   (methods looked up: ${fmt(sink)})`,
)
const ok = real >= TARGET_RATE && real > strong && real / weak >= TARGET_RATIO && disagree === 0
console.log(`targets: >= ${fmt(TARGET_RATE)}/s, faster than the combined RegExp, >= ${TARGET_RATIO}x the naive loop -> ${ok ? "met" : "NOT met"}`)
if (!ok) process.exitCode = 1
