import { describe, expect, it } from "bun:test"
import { Schema } from "effect"
import fixtureJson from "./fixtures/user-agents.json"
import matomoJson from "./fixtures/matomo-corpus.json"
import myipJson from "./fixtures/myip-corpus.json"
import { leadingLiteral, literalRuns, loadCatalog, makeClassifier, makeLiteralScanner } from "../../src/catalog/Classifier.js"

// The literal automaton reads a longer string as two halves at once and hands over to a single pass on
// the first occurrence. These properties check it, and the classifier built on it, against a plain
// search over every User-Agent of the fixtures and corpora and against strings built to put a literal
// across the middle of the text.

const Uas = Schema.Array(Schema.Struct({ ua: Schema.String }))
const Corpus = Schema.Struct({ rows: Uas })
const allUas: ReadonlyArray<string> = [
  ...Schema.decodeUnknownSync(Uas)(fixtureJson).map((r) => r.ua),
  ...Schema.decodeUnknownSync(Corpus)(matomoJson).rows.map((r) => r.ua),
  ...Schema.decodeUnknownSync(Corpus)(myipJson).rows.map((r) => r.ua),
]
const agents = loadCatalog().agents

/** The scanner's contract by plain search: every (end index, id) where the literal occurs, each character
 * read as its low seven bits, ASCII letters folded to lower case (as the automaton reads them). */
const plainScanner = (literals: ReadonlyArray<string>) => (s: string, out: Array<number>): number => {
  let folded = ""
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) & 127
    folded += String.fromCharCode(c >= 65 && c <= 90 ? c | 32 : c)
  }
  let w = 0
  literals.forEach((lit, id) => {
    for (let at = folded.indexOf(lit); at !== -1; at = folded.indexOf(lit, at + 1)) {
      out[w++] = at + lit.length - 1
      out[w++] = id
    }
  })
  return w
}

/** The literals the classifier scans for, as it picks them. */
const catalogLiterals: ReadonlyArray<string> = [
  ...new Set(
    agents
      .filter((a) => a.robots_only !== true)
      .flatMap((a) => a.patterns)
      .map((p) => {
        const lead = leadingLiteral(p)
        return lead !== null && lead.length >= 3 ? lead : literalRuns(p).reduce((a, b) => (b.length > a.length ? b : a), "").toLowerCase()
      }),
  ),
]

const occurrences = (scan: (s: string, out: Array<number>) => number, s: string): Array<string> => {
  const out: Array<number> = []
  const w = scan(s, out)
  const r: Array<string> = []
  for (let j = 0; j < w; j += 2) r.push(`${out[j]}:${out[j + 1]}`)
  return r.sort()
}

/** Each literal (in mixed case) spliced into browser-like text at every offset, for lengths on both sides
 * of the two-chain threshold, odd and even, so it lands before, across and after the middle. */
const spliced = function* (literals: ReadonlyArray<string>): Generator<string> {
  const filler = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
  for (const lit of literals) {
    const mixed = [...lit].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join("")
    for (const total of [lit.length, 23, 24, 25, 40, 61, 100]) {
      const room = Math.max(0, total - lit.length)
      for (let at = 0; at <= room; at++) {
        const one = filler.slice(0, at) + mixed + filler.slice(at, room)
        yield one
        // with another occurrence before or after it, so each half has found one first
        if (total === 40 || total === 61) {
          yield `GPTBot ${one}`
          yield `${one} Ai2Bot-Dolma`
        }
      }
    }
  }
}

describe("literal automaton against a plain search", () => {
  const scan = makeLiteralScanner(catalogLiterals)
  const plain = plainScanner(catalogLiterals)

  it("reports the same occurrences on every User-Agent of the fixtures and corpora", () => {
    const wrong: Array<string> = []
    for (const ua of allUas) {
      const got = occurrences(scan, ua)
      const want = occurrences(plain, ua)
      if (got.join() !== want.join()) wrong.push(`${ua}\n  want ${want.join(" ")}\n  got  ${got.join(" ")}`)
    }
    expect(allUas.length).toBeGreaterThan(12_000)
    expect(wrong).toEqual([])
  })

  it("finds a literal wherever it sits, across the middle included, and several at once", () => {
    const wrong: Array<string> = []
    for (const s of spliced(catalogLiterals)) {
      const got = occurrences(scan, s)
      const want = occurrences(plain, s)
      if (got.length === 0 || got.join() !== want.join()) wrong.push(s)
    }
    // two literals, one in each half, and overlapping ones
    for (const s of ["x".repeat(30) + "GPTBot" + "y".repeat(30) + "ClaudeBot", "ChatGPT-User".repeat(5), "ai2bot-dolma ai2bot", "\u00e9".repeat(40) + "mcp-remote/1"]) {
      if (occurrences(scan, s).join() !== occurrences(plain, s).join()) wrong.push(s)
    }
    expect(wrong).toEqual([])
  })

  it("keeps the contract on a small literal set with short and overlapping literals", () => {
    const lits = ["he", "she", "his", "hers", "abcdefghijklmnopqrstuvwxyz0123456789"]
    const scan2 = makeLiteralScanner(lits)
    const plain2 = plainScanner(lits)
    const texts = ["uSHErs", "x".repeat(50) + "ushers" + "y".repeat(50), "ab".repeat(20) + "abcdefghijklmnopqrstuvwxyz0123456789".toUpperCase() + "hers"]
    for (let at = 0; at < 60; at++) texts.push("-".repeat(at) + "abcdefghijklmnopqrstuvwxyz0123456789" + "-".repeat(60 - at))
    for (const t of texts) expect([t, occurrences(scan2, t)]).toEqual([t, occurrences(plain2, t)])
  })
})

describe("classifier against the same rules without the automaton", () => {
  const classify = makeClassifier(agents)
  const reference = makeClassifier(agents, plainScanner)
  const patterns = agents.filter((a) => a.robots_only !== true).map((a) => ({ bot: a.bot, res: a.patterns.map((p) => new RegExp(p, "i")) }))

  it("gives the same answer on every User-Agent of the fixtures and corpora, and on spliced literals", () => {
    const wrong: Array<string> = []
    const check = (ua: string) => {
      const got = classify(ua)
      const want = reference(ua)
      if (JSON.stringify(got) !== JSON.stringify(want)) wrong.push(`${ua}: want ${want?.bot ?? null}, got ${got?.bot ?? null}`)
    }
    for (const ua of allUas) check(ua)
    for (const s of spliced(catalogLiterals)) check(s)
    expect(wrong).toEqual([])
  })

  it("says crawler exactly when some pattern's RegExp matches, and names an agent whose pattern does", () => {
    const wrong: Array<string> = []
    for (const ua of allUas) {
      const c = classify(ua)
      const any = patterns.some((p) => p.res.some((re) => re.test(ua)))
      if ((c !== null) !== any) wrong.push(`${ua}: classified ${c?.bot ?? null}, a pattern matches: ${any}`)
      if (c !== null && !patterns.find((p) => p.bot === c.bot)!.res.some((re) => re.test(ua))) wrong.push(`${ua}: ${c.bot}'s patterns do not match`)
    }
    expect(wrong).toEqual([])
  })
})
