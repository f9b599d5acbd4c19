/**
 * AI crawler catalog and User-Agent classifier.
 *
 * The catalog is data (agents.json, decoded here with effect/Schema). The classifier compiles every
 * pattern of every non-robots-only agent into one case-insensitive RegExp, guarded by a cheap marker
 * scan derived from the patterns themselves, so ordinary browser User-Agents are rejected after a
 * single pass. See docs/catalog.md.
 */
import { Context, Effect, Layer, Schema } from "effect"
import agentsJson from "./agents.json"

export const AgentKind = Schema.Literal(
  "training_crawler",
  "search_crawler",
  "browsing_agent",
  "agentic_browser",
  "mcp_client",
)
export type AgentKind = typeof AgentKind.Type

export const AGENT_KINDS: ReadonlyArray<AgentKind> = AgentKind.literals

export const Verification = Schema.Struct({
  ip_ranges_url: Schema.optional(Schema.String),
  reverse_dns: Schema.optional(Schema.Array(Schema.String)),
})

export const CatalogAgentSchema = Schema.Struct({
  bot: Schema.NonEmptyString,
  vendor: Schema.NonEmptyString,
  kind: AgentKind,
  patterns: Schema.Array(Schema.String),
  docs: Schema.String,
  verification: Schema.optional(Verification),
  sources: Schema.Array(Schema.String),
  robots_only: Schema.optional(Schema.Boolean),
  notes: Schema.optional(Schema.String),
})
export interface CatalogAgent extends Schema.Schema.Type<typeof CatalogAgentSchema> {}

export const FalseFriend = Schema.Struct({ token: Schema.String, reason: Schema.String })

export const CatalogSchema = Schema.Struct({
  version: Schema.NonEmptyString,
  sources: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  agents: Schema.Array(CatalogAgentSchema),
  false_friends: Schema.optional(Schema.Array(FalseFriend)),
})
export interface Catalog extends Schema.Schema.Type<typeof CatalogSchema> {}

export interface Classification {
  readonly bot: string
  readonly vendor: string
  readonly kind: AgentKind
}

/** Decodes the bundled agents.json (throws a ParseError if the file is malformed). */
export const decodeCatalog = Schema.decodeUnknown(CatalogSchema)

let cachedCatalog: Catalog | undefined
/** The bundled catalog, decoded once. */
export const loadCatalog = (): Catalog =>
  (cachedCatalog ??= Schema.decodeUnknownSync(CatalogSchema)(agentsJson))

// ---------------------------------------------------------------------------------------------
// Pattern analysis

/**
 * Literal runs of a pattern source: substrings that every match of the pattern must contain.
 * Characters inside groups (lookarounds, optional groups), classes, optional or counted characters
 * break a run. Throws on top-level alternation (use several patterns instead).
 */
export const literalRuns = (src: string): ReadonlyArray<string> => {
  const runs: Array<string> = []
  let cur = ""
  let depth = 0
  const flush = () => {
    if (cur.length > 0) runs.push(cur)
    cur = ""
  }
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!
    let lit: string | null = null
    if (c === "\\") {
      const n = src[++i]
      if (n !== undefined && !/[A-Za-z0-9]/.test(n)) lit = n
    } else if (c === "[") {
      i++
      if (src[i] === "^") i++
      if (src[i] === "]") i++
      while (i < src.length && src[i] !== "]") {
        if (src[i] === "\\") i++
        i++
      }
    } else if (c === "(") {
      depth++
      flush()
      continue
    } else if (c === ")") {
      depth--
      flush()
      continue
    } else if (c === "{") {
      while (i < src.length && src[i] !== "}") i++
      flush()
      continue
    } else if (c === "?" || c === "*" || c === "+") {
      flush()
      continue
    } else if (c === "|") {
      if (depth === 0) throw new Error(`top-level alternation in pattern ${src}; split it into several patterns`)
    } else if (c !== "^" && c !== "$" && c !== ".") {
      lit = c
    }
    if (depth > 0) continue
    if (lit === null) {
      flush()
      continue
    }
    const q = src[i + 1]
    if (q === "?" || q === "*" || q === "{") {
      flush()
      continue
    }
    cur += lit
    if (q === "+") flush()
  }
  flush()
  return runs
}

/** Substrings shared by most crawler names; a pattern containing one needs no marker of its own. */
const GENERIC_MARKERS = ["bot", "spider", "crawl", "agent", "user", "fetch"] as const

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** Marker substrings (lower case): every User-Agent matched by a pattern contains at least one. */
export const markersFor = (patterns: ReadonlyArray<string>): ReadonlyArray<string> => {
  const markers = new Set<string>(GENERIC_MARKERS)
  for (const p of patterns) {
    const runs = literalRuns(p).map((r) => r.toLowerCase())
    if (runs.some((r) => GENERIC_MARKERS.some((m) => r.includes(m)))) continue
    const longest = runs.reduce((a, b) => (b.length > a.length ? b : a), "")
    if (longest.length < 3) throw new Error(`pattern ${p} has no literal of 3+ characters to use as a marker`)
    markers.add(longest)
  }
  // drop markers that contain another marker: the shorter one already lets the UA through
  const all = [...markers]
  return all.filter((m) => !all.some((o) => o !== m && m.includes(o)))
}

// ---------------------------------------------------------------------------------------------
// Classifier

/** `(?<![\w-])LITERAL(?![\w])`: the common "whole token" pattern shape, matched through one shared group. */
const TOKEN_SHAPE = /^\(\?<!\[\\w-\]\)((?:[^\\()[\]{}?*+|^$.]|\\[^A-Za-z0-9])+)\(\?!\[\\w\]\)$/

/** A RegExp source matching exactly the given (lower-case) literals, as a trie: at one position the
 * engine tests one branch per distinct next character instead of every literal, and a longer literal
 * is preferred over its prefix. */
export const trieSource = (words: ReadonlyArray<string>): string => {
  interface Node {
    end: boolean
    readonly next: Map<string, Node>
  }
  const root: Node = { end: false, next: new Map() }
  for (const w of words) {
    let n = root
    for (const ch of w) {
      let c = n.next.get(ch)
      if (c === undefined) {
        c = { end: false, next: new Map() }
        n.next.set(ch, c)
      }
      n = c
    }
    n.end = true
  }
  const emit = (n: Node): string => {
    const alts = [...n.next].map(([ch, c]) => escapeRegExp(ch) + emit(c))
    if (alts.length === 0) return ""
    const body = alts.length === 1 ? alts[0]! : `(?:${alts.join("|")})`
    return n.end ? (alts.length === 1 ? `(?:${body})?` : `${body}?`) : body
  }
  return emit(root)
}

/**
 * A case-insensitive substring finder for a set of ASCII markers: one pass over the string with a
 * rolling 3-character hash into a table; a hit is verified exactly. Much faster than a RegExp
 * alternation of the same markers, which tries every marker at every position.
 */
export const makeMarkerScan = (markers: ReadonlyArray<string>): ((s: string) => boolean) => {
  const KEY = (a: number, b: number, c: number) => ((a & 31) << 10) | ((b & 31) << 5) | (c & 31)
  // table: hash of a marker's last 3 characters -> first candidate; candidates chained through `chain`
  const table = new Int32Array(1 << 15).fill(-1)
  const codes: Array<Int32Array> = []
  const offs: Array<number> = []
  const chain: Array<number> = []
  for (const m of markers) {
    const code = Int32Array.from([...m.toLowerCase()].map((ch) => ch.charCodeAt(0)))
    if (code.length < 3) throw new Error(`marker ${m} is shorter than 3 characters`)
    if (code.some((c) => c > 127)) throw new Error(`marker ${m} is not ASCII`)
    const off = code.length - 3
    const k = KEY(code[off]!, code[off + 1]!, code[off + 2]!)
    chain.push(table[k]!)
    table[k] = codes.length
    codes.push(code)
    offs.push(off)
  }
  const verify = (s: string, end: number, first: number): boolean => {
    for (let t = first; t !== -1; t = chain[t]!) {
      const code = codes[t]!
      const start = end - 2 - offs[t]!
      if (start < 0) continue
      let j = 0
      for (; j < code.length; j++) {
        const c = s.charCodeAt(start + j)
        if ((c >= 65 && c <= 90 ? c | 32 : c) !== code[j]) break
      }
      if (j === code.length) return true
    }
    return false
  }
  return (s: string): boolean => {
    const n = s.length
    if (n < 3) return false
    let h = ((s.charCodeAt(0) & 31) << 5) | (s.charCodeAt(1) & 31)
    for (let i = 2; i < n; i++) {
      h = ((h << 5) | (s.charCodeAt(i) & 31)) & 0x7fff
      const t = table[h]!
      if (t !== -1 && verify(s, i, t)) return true
    }
    return false
  }
}

interface Other {
  readonly re: RegExp
  readonly classification: Classification
  readonly order: number
}

/**
 * Builds a pure classifier. Robots-only agents and agents without patterns never match.
 * When several agents match, the longest matched text wins (Ai2Bot-Dolma over AI2Bot, ChatGPT-User
 * over GPTBot), then the earlier catalog entry.
 *
 * Speed: a marker scan (substrings every match must contain, derived from the patterns) rejects
 * ordinary browsers after one scan; the rest run one combined RegExp without capture groups, in which
 * all whole-token patterns share a single group. The matched text then names the agent (a Map
 * lookup), or, for the few free-form patterns, a sticky re-test at the match position does.
 */
export const makeClassifier = (agents: ReadonlyArray<CatalogAgent>): ((ua: string) => Classification | null) => {
  const tokens = new Map<string, { classification: Classification; order: number }>()
  const others: Array<Other & { src: string; weight: number }> = []
  const all: Array<string> = []
  agents.forEach((a, order) => {
    if (a.robots_only === true) return
    const classification: Classification = Object.freeze({ bot: a.bot, vendor: a.vendor, kind: a.kind })
    for (const src of a.patterns) {
      new RegExp(src, "i") // fails early, naming the pattern
      all.push(src)
      const t = TOKEN_SHAPE.exec(src)
      if (t !== null) {
        const key = t[1]!.replace(/\\(.)/g, "$1").toLowerCase()
        if (!tokens.has(key)) tokens.set(key, { classification, order })
      } else {
        const weight = literalRuns(src).reduce((n, r) => n + r.length, 0)
        others.push({ src, re: new RegExp(src, "iy"), classification, order, weight })
      }
    }
  })
  if (all.length === 0) return () => null
  // Longer alternatives first, so that at one start position the more specific one is tried first.
  others.sort((x, y) => y.weight - x.weight || x.order - y.order)
  const alternatives = others.map((o) => `(?:${o.src})`)
  if (tokens.size > 0) alternatives.unshift(`(?<![\\w-])${trieSource([...tokens.keys()])}(?![\\w])`)
  const combined = new RegExp(alternatives.join("|"), "gi")
  const prefilter = makeMarkerScan(markersFor(all))

  const identify = (text: string, index: number, ua: string): { classification: Classification; order: number } => {
    const t = tokens.get(text.toLowerCase())
    if (t !== undefined) return t
    for (const o of others) {
      o.re.lastIndex = index
      if (o.re.test(ua) && o.re.lastIndex - index === text.length) return o
    }
    /* c8 ignore next */
    throw new Error(`classifier: cannot attribute match ${text}`)
  }

  return (ua: string): Classification | null => {
    if (!prefilter(ua)) return null
    combined.lastIndex = 0
    let m = combined.exec(ua)
    if (m === null) return null
    let best = identify(m[0], m.index, ua)
    let bestLen = m[0].length
    // Other, possibly longer, matches further on (only bot strings get here).
    combined.lastIndex = m.index + 1
    while ((m = combined.exec(ua)) !== null) {
      const len = m[0].length
      if (len >= bestLen) {
        const e = identify(m[0], m.index, ua)
        if (len > bestLen || e.order < best.order) {
          best = e
          bestLen = len
        }
      }
      combined.lastIndex = m.index + 1
    }
    return best.classification
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers for filters (dashboard, API parameters)

/** True for the five crawler kinds of spec 2.13. */
export const isKind = (s: unknown): s is AgentKind => typeof s === "string" && (AGENT_KINDS as ReadonlyArray<string>).includes(s)

/** Distinct vendors of the catalog, sorted. */
export const vendors = (agents: ReadonlyArray<CatalogAgent> = loadCatalog().agents): ReadonlyArray<string> =>
  [...new Set(agents.map((a) => a.vendor))].sort((a, b) => a.localeCompare(b))

/** Distinct bot names of the catalog (including robots-only tokens), sorted. */
export const bots = (agents: ReadonlyArray<CatalogAgent> = loadCatalog().agents): ReadonlyArray<string> =>
  [...new Set(agents.map((a) => a.bot))].sort((a, b) => a.localeCompare(b))

/** Bot names operated by a vendor (exact vendor name). */
export const botsOfVendor = (vendor: string, agents: ReadonlyArray<CatalogAgent> = loadCatalog().agents): ReadonlyArray<string> =>
  agents.filter((a) => a.vendor === vendor).map((a) => a.bot)

/** Bot names of a kind. */
export const botsOfKind = (kind: AgentKind, agents: ReadonlyArray<CatalogAgent> = loadCatalog().agents): ReadonlyArray<string> =>
  agents.filter((a) => a.kind === kind).map((a) => a.bot)

/** The catalog entry with this exact bot name, if any. */
export const findAgent = (bot: string, agents: ReadonlyArray<CatalogAgent> = loadCatalog().agents): CatalogAgent | undefined =>
  agents.find((a) => a.bot === bot)

// ---------------------------------------------------------------------------------------------
// Service

export class Classifier extends Context.Tag("Classifier")<
  Classifier,
  {
    readonly classify: (ua: string) => Classification | null
    readonly agents: ReadonlyArray<CatalogAgent>
  }
>() {}

/** The classifier built from the bundled agents.json. A malformed catalog is a defect. */
export const ClassifierLive: Layer.Layer<Classifier> = Layer.effect(
  Classifier,
  Effect.map(decodeCatalog(agentsJson), (catalog) =>
    Classifier.of({ classify: makeClassifier(catalog.agents), agents: catalog.agents }),
  ).pipe(Effect.orDie),
)

/** A fake for tests: exact User-Agent string to classification, anything else is not a crawler. */
export const classifierFake = (map: Record<string, Classification>): Layer.Layer<Classifier> => {
  const table = new Map(Object.entries(map))
  const seen = new Map<string, CatalogAgent>()
  for (const c of table.values()) {
    if (!seen.has(c.bot)) seen.set(c.bot, { bot: c.bot, vendor: c.vendor, kind: c.kind, patterns: [], docs: "", sources: ["fake"] })
  }
  return Layer.succeed(
    Classifier,
    Classifier.of({ classify: (ua) => table.get(ua) ?? null, agents: [...seen.values()] }),
  )
}
