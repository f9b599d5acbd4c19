/**
 * AI crawler catalog and User-Agent classifier.
 *
 * The catalog is data (agents.json, decoded here with effect/Schema). The classifier finds the literal
 * each pattern begins with in one automaton pass over the User-Agent, so ordinary browsers and unknown
 * bots are rejected without running a RegExp, and confirms each occurrence with its pattern's RegExp.
 * See docs/catalog.md.
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

/** `(?<![\w-])LITERAL(?![\w])`: the common "whole token" pattern shape (a token spelled twice is the first agent's). */
const TOKEN_SHAPE = /^\(\?<!\[\\w-\]\)((?:[^\\()[\]{}?*+|^$.]|\\[^A-Za-z0-9])+)\(\?!\[\\w\]\)$/

/**
 * The literal every match of a pattern begins with (lower case): after `^` and lookbehind groups, the
 * run of literal characters up to the first group, class, wildcard or optional character. Every start
 * position of a match is therefore an occurrence of it. Null when the pattern has no such run.
 */
export const leadingLiteral = (src: string): string | null => {
  let i = 0
  for (;;) {
    if (src[i] === "^") {
      i++
    } else if (src.startsWith("(?<!", i) || src.startsWith("(?<=", i)) {
      let depth = 0
      for (; i < src.length; i++) {
        const c = src[i]
        if (c === "\\") i++
        else if (c === "[") {
          while (i < src.length && src[i] !== "]") i += src[i] === "\\" ? 2 : 1
        } else if (c === "(") depth++
        else if (c === ")" && --depth === 0) break
      }
      i++
    } else break
  }
  let lit = ""
  for (; i < src.length; i++) {
    const c = src[i]!
    let ch: string
    if (c === "\\") {
      const n = src[i + 1]
      if (n === undefined || /[A-Za-z0-9]/.test(n)) break
      ch = n
      i++
    } else if ("()[]{}?*+|^$.".includes(c)) break
    else ch = c
    const q = src[i + 1]
    if (q === "?" || q === "*" || q === "{") break
    lit += ch
    if (q === "+") break
  }
  return lit.length > 0 ? lit.toLowerCase() : null
}

/** Strings shorter than this are scanned in one chain (the second chain's setup would not pay). */
const TWO_CHAINS_FROM = 24

/**
 * One pass over a string for a set of ASCII literals, case-insensitive (Aho-Corasick as a table-driven
 * automaton with one column per ASCII character). `scan` writes each occurrence once as an (end index,
 * literal id) pair into `out`, in no set order, and returns how many numbers it wrote; a string without any
 * occurrence costs one table read per character and writes nothing. A non-ASCII character is read as its
 * low seven bits: it may report an occurrence that is not there (callers confirm each one), it never hides
 * one, since a literal's characters are all ASCII.
 *
 * Speed: one automaton step is a table read whose address depends on the step before, so a single pass
 * waits on memory at every character. A longer string is read as two halves in one loop, two independent
 * chains the processor overlaps; the first half's chain goes on past the middle while the text it is
 * matching began before the middle (its depth says so), so an occurrence across the middle is not lost.
 * Once either chain meets an occurrence both finish where they stand: the first reports the occurrences
 * that begin before the middle, the second the others.
 */
export const makeLiteralScanner = (literals: ReadonlyArray<string>) => {
  for (const lit of literals) {
    if (!/^[\x00-\x7f]+$/.test(lit) || lit !== lit.toLowerCase()) throw new Error(`literal ${lit} is not lower-case ASCII`)
  }
  const fold = (c: number) => (c >= 65 && c <= 90 ? c | 32 : c)
  // trie over lower-case characters
  const next: Array<Map<number, number>> = [new Map()]
  const ends: Array<Array<number>> = [[]]
  literals.forEach((lit, id) => {
    let s = 0
    for (let j = 0; j < lit.length; j++) {
      const c = lit.charCodeAt(j)
      let t = next[s]!.get(c)
      if (t === undefined) {
        t = next.length
        next.push(new Map())
        ends.push([])
        next[s]!.set(c, t)
      }
      s = t
    }
    ends[s]!.push(id)
  })
  // failure links in breadth-first order complete the automaton; a state also reports its suffixes'
  const n = next.length
  const delta = new Int32Array(n * 128)
  const fail = new Int32Array(n)
  const order: Array<number> = [0]
  for (let q = 0; q < order.length; q++) {
    const s = order[q]!
    for (let c = 0; c < 128; c++) {
      const t = next[s]!.get(fold(c))
      if (t !== undefined && c === fold(c)) {
        fail[t] = s === 0 ? 0 : delta[fail[s]! * 128 + c]!
        ends[t] = [...ends[t]!, ...ends[fail[t]!]!]
        order.push(t)
      }
      delta[s * 128 + c] = t !== undefined ? t : s === 0 ? 0 : delta[fail[s]! * 128 + fold(c)]!
    }
  }
  // renumber: states without output first, so the loop tests one comparison; entries pre-multiplied
  const silent = order.filter((s) => ends[s]!.length === 0)
  const loud = order.filter((s) => ends[s]!.length > 0)
  const renum = new Int32Array(n)
  ;[...silent, ...loud].forEach((s, i) => (renum[s] = i))
  const table = new Int32Array(n * 128)
  for (let s = 0; s < n; s++) {
    for (let c = 0; c < 128; c++) table[renum[s]! * 128 + c] = renum[delta[s * 128 + c]!]! * 128
  }
  const loudFrom = silent.length * 128
  // the literal ids each loud state reports, flat: outIds[outFrom[k], outFrom[k + 1]) for loud state k
  const outFrom = new Int32Array(loud.length + 1)
  const outIds = new Int32Array(loud.reduce((m, s) => m + ends[s]!.length, 0))
  loud.forEach((s, k) => {
    outIds.set(ends[s]!, outFrom[k]!)
    outFrom[k + 1] = outFrom[k]! + ends[s]!.length
  })
  // length of the text each state has matched (its trie depth): the two-chain pass reads it
  const depth = new Int32Array(n)
  for (const s of order) for (const t of next[s]!.values()) depth[renum[t]!] = depth[renum[s]!]! + 1
  /** Reports the occurrences ending at `from` (where the pass reached the loud `state`) and every later one. */
  const collect = (s: string, from: number, state: number, out: Array<number>): number => {
    let w = 0
    for (let i = from; ; ) {
      if (state >= loudFrom) {
        const k = (state - loudFrom) >> 7
        for (let x = outFrom[k]!, end = outFrom[k + 1]!; x < end; x++) {
          out[w++] = i
          out[w++] = outIds[x]!
        }
      }
      if (++i >= s.length) return w
      state = table[state + (s.charCodeAt(i) & 127)]!
    }
  }
  /** The single pass from `from` in `state` (the automaton's state after s[0, from)). */
  const single = (s: string, out: Array<number>, from: number, state: number): number => {
    for (let i = from; i < s.length; i++) {
      state = table[state + (s.charCodeAt(i) & 127)]!
      if (state >= loudFrom) return collect(s, i, state, out)
    }
    return 0
  }
  const lengths = Int32Array.from(literals, (l) => l.length)
  /** Writes the occurrences the loud `state` reports at `end` that begin before `below`. */
  const emit = (state: number, end: number, below: number, out: Array<number>, w: number): number => {
    const k = (state - loudFrom) >> 7
    for (let x = outFrom[k]!, stop = outFrom[k + 1]!; x < stop; x++) {
      const id = outIds[x]!
      if (end - lengths[id]! < below - 1) {
        out[w++] = end
        out[w++] = id
      }
    }
    return w
  }
  /**
   * Finishes both chains once one of them found an occurrence: chain a has read s[0, ea] (ea < mid, or
   * ea >= mid when it is past the middle), chain b s[mid, eb]. Chain a reports what begins before mid,
   * chain b the rest; each character is read once more at most (chain a's stretch past the middle).
   */
  const finish = (s: string, out: Array<number>, mid: number, ea: number, a: number, eb: number, b: number): number => {
    const n = s.length
    let w = 0
    let i = ea
    if (ea < mid) {
      for (;;) {
        if (a >= loudFrom) w = emit(a, i, n, out, w)
        if (++i >= mid) break
        a = table[a + (s.charCodeAt(i) & 127)]!
      }
    } else if (a >= loudFrom) {
      w = emit(a, i++, mid, out, w)
    }
    for (; i < n && depth[a >> 7]! > i - mid; i++) {
      a = table[a + (s.charCodeAt(i) & 127)]!
      if (a >= loudFrom) w = emit(a, i, mid, out, w)
    }
    for (i = eb; ; ) {
      if (b >= loudFrom) w = emit(b, i, n, out, w)
      if (++i >= n) return w
      b = table[b + (s.charCodeAt(i) & 127)]!
    }
  }
  return (s: string, out: Array<number>): number => {
    const n = s.length
    if (n < TWO_CHAINS_FROM) return single(s, out, 0, 0)
    // the common case, no literal anywhere: s[0, mid) and s[mid, n) in one loop
    const mid = n >> 1
    let a = 0
    let b = 0
    for (let i = 0; i < mid; i++) {
      a = table[a + (s.charCodeAt(i) & 127)]!
      b = table[b + (s.charCodeAt(mid + i) & 127)]!
      if (a >= loudFrom || b >= loudFrom) return finish(s, out, mid, i, a, mid + i, b)
    }
    if (mid + mid < n) {
      b = table[b + (s.charCodeAt(n - 1) & 127)]!
      if (b >= loudFrom) return finish(s, out, mid, mid - 1, a, n - 1, b)
    }
    // chain a goes on while the text it is matching began before mid (b started afresh at mid)
    for (let i = mid; i < n && depth[a >> 7]! > i - mid; i++) {
      a = table[a + (s.charCodeAt(i) & 127)]!
      if (a >= loudFrom) return finish(s, out, mid, i, a, n - 1, b)
    }
    return 0
  }
}

/** `\w` of a RegExp without the u flag: ASCII letters, digits and `_`. */
const isWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95

/** `(?<![\w-])token(?![\w])` at `start`, case-insensitively (ASCII), as the pattern's RegExp would answer. */
const tokenAt = (s: string, start: number, token: string): boolean => {
  if (start < 0 || start + token.length > s.length) return false
  if (start > 0) {
    const b = s.charCodeAt(start - 1)
    if (b === 45 || isWordChar(b)) return false
  }
  for (let j = 0; j < token.length; j++) {
    const c = s.charCodeAt(start + j)
    if ((c >= 65 && c <= 90 ? c | 32 : c) !== token.charCodeAt(j)) return false
  }
  const end = start + token.length
  return end === s.length || !isWordChar(s.charCodeAt(end))
}

interface Rule {
  /** A whole-token pattern's token (lower case), confirmed without a RegExp; null for the others. */
  readonly token: string | null
  readonly re: RegExp
  readonly classification: Classification
  readonly order: number
  /** At one start position the rule with the lowest rank wins (longer whole tokens first, then the
   * free-form patterns by literal weight), as in a single alternation of all patterns. */
  readonly rank: number
  /** False for a pattern that does not begin with its scan literal: it is then run over the whole string. */
  readonly anchored: boolean
  /** The call that last ran an unanchored rule (it runs once per string however often its literal occurs). */
  ran: number
}

/**
 * Builds a pure classifier. Robots-only agents and agents without patterns never match.
 * When several agents match, the longest matched text wins (Ai2Bot-Dolma over AI2Bot, ChatGPT-User
 * over GPTBot), then the earlier catalog entry.
 *
 * Speed: a catalog pattern begins with a literal (leadingLiteral); one case-insensitive automaton pass
 * finds every occurrence of all of them, so a browser or a bot the catalog does not know is rejected
 * after a single scan with no RegExp run. Each occurrence is confirmed by its pattern's sticky RegExp
 * at that position. A pattern that does not begin with a literal is scanned for its longest literal
 * and, when that occurs, run over the whole string.
 */
export const makeClassifier = (
  agents: ReadonlyArray<CatalogAgent>,
  /** How the literals are found (tests pass a plain search to check the automaton against). */
  scanner: (literals: ReadonlyArray<string>) => (s: string, out: Array<number>) => number = makeLiteralScanner,
): ((ua: string) => Classification | null) => {
  const TOKEN_RANK_BASE = 1_000_000
  const seenTokens = new Set<string>()
  const pending: Array<{ src: string; lit: string; anchored: boolean; classification: Classification; order: number; token: string | null; weight: number }> = []
  agents.forEach((a, order) => {
    if (a.robots_only === true) return
    const classification: Classification = Object.freeze({ bot: a.bot, vendor: a.vendor, kind: a.kind })
    for (const src of a.patterns) {
      new RegExp(src, "i") // fails early, naming the pattern
      const runs = literalRuns(src) // throws on a top-level alternation, whose leading literal would not cover it
      const lead = leadingLiteral(src)
      const anchored = lead !== null && lead.length >= 3
      const lit = anchored ? lead : runs.reduce((a, b) => (b.length > a.length ? b : a), "").toLowerCase()
      if (lit.length < 3) throw new Error(`pattern ${src} has no literal of 3+ characters`)
      const t = TOKEN_SHAPE.exec(src)
      if (t !== null) {
        // a whole token spelled twice is the first agent's (one alternative of an alternation)
        const key = t[1]!.replace(/\\(.)/g, "$1").toLowerCase()
        if (seenTokens.has(key)) continue
        seenTokens.add(key)
        pending.push({ src, lit, anchored, classification, order, token: key, weight: key.length })
      } else {
        const weight = runs.reduce((n, r) => n + r.length, 0)
        pending.push({ src, lit, anchored, classification, order, token: null, weight })
      }
    }
  })
  if (pending.length === 0) return () => null
  const free = pending.filter((p) => p.token === null).sort((x, y) => y.weight - x.weight || x.order - y.order)
  const literalIds = new Map<string, number>()
  const byLiteral: Array<Array<Rule>> = []
  for (const p of pending) {
    const rank = p.token !== null ? -p.weight : TOKEN_RANK_BASE + free.indexOf(p)
    let id = literalIds.get(p.lit)
    if (id === undefined) {
      id = byLiteral.length
      literalIds.set(p.lit, id)
      byLiteral.push([])
    }
    const re = new RegExp(p.src, p.anchored ? "iy" : "gi")
    const token = p.token !== null && p.lit === p.token ? p.token : null
    byLiteral[id]!.push({ token, re, classification: p.classification, order: p.order, rank, anchored: p.anchored, ran: 0 })
  }
  const lengths = [...literalIds.keys()].map((l) => l.length)
  const scan = scanner([...literalIds.keys()])
  const found: Array<number> = []
  const starts: Array<number> = []
  const lens: Array<number> = []
  const rules: Array<Rule> = []
  let call = 0

  return (ua: string): Classification | null => {
    const w = scan(ua, found)
    if (w === 0) return null
    call++
    // candidates: every confirmed (start, length, rule)
    let k = 0
    for (let j = 0; j < w; j += 2) {
      const id = found[j + 1]!
      const start = found[j]! - lengths[id]! + 1
      for (const rule of byLiteral[id]!) {
        const re = rule.re
        if (rule.token !== null) {
          if (tokenAt(ua, start, rule.token)) {
            starts[k] = start
            lens[k] = rule.token.length
            rules[k++] = rule
          }
        } else if (rule.anchored) {
          re.lastIndex = start
          if (re.test(ua)) {
            starts[k] = start
            lens[k] = re.lastIndex - start
            rules[k++] = rule
          }
        } else if (rule.ran !== call) {
          rule.ran = call
          re.lastIndex = 0
          let m: RegExpExecArray | null
          while ((m = re.exec(ua)) !== null) {
            starts[k] = m.index
            lens[k] = m[0].length
            rules[k++] = rule
            re.lastIndex = m.index + 1
          }
        }
      }
    }
    // per start position the lowest rank; overall the longest, then the earlier agent, then the leftmost
    let best = -1
    for (let a = 0; a < k; a++) {
      let winner = true
      for (let b = 0; b < k && winner; b++) {
        if (b !== a && starts[b] === starts[a] && (rules[b]!.rank < rules[a]!.rank || (rules[b]!.rank === rules[a]!.rank && b < a))) winner = false
      }
      if (!winner) continue
      if (
        best === -1 || lens[a]! > lens[best]! ||
        (lens[a] === lens[best] && (rules[a]!.order < rules[best]!.order || (rules[a]!.order === rules[best]!.order && starts[a]! < starts[best]!)))
      ) best = a
    }
    return best === -1 ? null : rules[best]!.classification
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers for filters (dashboard, API parameters)

/** True for the five crawler kinds of docs/catalog.md. */
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
    /** The catalog's version (agents.json `version`). */
    readonly version: string
  }
>() {}

/** The classifier built from the bundled agents.json. A malformed catalog is a defect. */
export const ClassifierLive: Layer.Layer<Classifier> = Layer.effect(
  Classifier,
  Effect.map(decodeCatalog(agentsJson), (catalog) =>
    Classifier.of({ classify: makeClassifier(catalog.agents), agents: catalog.agents, version: catalog.version }),
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
    Classifier.of({ classify: (ua) => table.get(ua) ?? null, agents: [...seen.values()], version: "fake" }),
  )
}
