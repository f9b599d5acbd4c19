import { describe, expect, it } from "bun:test"
import { makeAnalysis, sentenceStarts } from "../../src/observations/Analysis.js"
import { caseFold, isSpace, makeNameMatcher, type MatcherName } from "../../src/observations/Names.js"
import { makeLexiconScorer } from "../../src/observations/Sentiment.js"

/**
 * The mention matcher (src/observations/Names.ts) against the regular expression it replaces: the same
 * occurrences for every input, in time linear in the text whatever the number of names.
 */

// The former matcher, as it was: one case-insensitive Unicode RegExp of every name, the reference.
const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const referencePattern = (names: ReadonlyArray<string>): RegExp | null => {
  if (names.length === 0) return null
  const groups = new Map<string, Array<string>>()
  for (const name of [...names].sort((a, b) => b.length - a.length)) {
    const before = WORD_CHAR.test(name[0]!) ? "(?<![\\p{L}\\p{N}\\p{M}_])" : ""
    const after = WORD_CHAR.test(name[name.length - 1]!) ? "(?![\\p{L}\\p{N}\\p{M}_])" : ""
    const key = before + "|" + after
    const group = groups.get(key) ?? []
    group.push(name.split(/\s+/).map(escapeRegExp).join("\\s+"))
    groups.set(key, group)
  }
  return new RegExp(
    [...groups.entries()].map(([key, bodies]) => {
      const [before, after] = key.split("|") as [string, string]
      return `${before}(?:${bodies.join("|")})${after}`
    }).join("|"),
    "giu"
  )
}
const referenceScan = (names: ReadonlyArray<string>, text: string): Array<number> => {
  const pattern = referencePattern(names)
  const found: Array<number> = []
  if (pattern === null) return found
  let match: RegExpExecArray | null
  while ((match = pattern.exec(text)) !== null) found.push(match.index, match.index + match[0].length)
  return found
}
// The same priority order Analysis gives the matcher.
const ordered = (names: ReadonlyArray<string>): Array<MatcherName> => {
  const groups = new Map<string, Array<MatcherName>>()
  for (const name of [...names].sort((a, b) => b.length - a.length)) {
    const boundaryBefore = WORD_CHAR.test(name[0]!)
    const boundaryAfter = WORD_CHAR.test(name[name.length - 1]!)
    const group = groups.get(`${boundaryBefore}|${boundaryAfter}`) ?? []
    group.push({ text: name, boundaryBefore, boundaryAfter })
    groups.set(`${boundaryBefore}|${boundaryAfter}`, group)
  }
  return [...groups.values()].flat()
}

const seeded = (seed: number) => () => {
  seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
  return seed
}

describe("case folding and white space as the RegExp engine sees them", () => {
  it("every cased code point folds as a case-insensitive Unicode RegExp compares it", () => {
    const single = (s: string) => [...s].length === 1
    const cased = new Set<number>()
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue
      const s = String.fromCodePoint(cp)
      const lower = s.toLowerCase()
      const upper = s.toUpperCase()
      if (lower === s && upper === s) continue
      cased.add(cp)
      for (const t of [lower, upper]) if (single(t)) cased.add(t.codePointAt(0)!)
    }
    const all = [...cased].sort((a, b) => a - b)
    const text = all.map((cp) => String.fromCodePoint(cp)).join("")
    const mismatches: Array<string> = []
    for (const cp of all) {
      const equal = new Set<number>()
      for (const m of text.matchAll(new RegExp(escapeRegExp(String.fromCodePoint(cp)), "giu"))) equal.add(m[0].codePointAt(0)!)
      for (const other of all) {
        if (equal.has(other) !== (caseFold(other) === caseFold(cp))) mismatches.push(`${cp.toString(16)}~${other.toString(16)}`)
      }
      if (mismatches.length > 10) break
    }
    expect(mismatches).toEqual([])
    // Nothing outside those folds with any of them, and nothing from U+1F000 on has a case.
    const anyCased = new RegExp(`[${all.map((cp) => escapeRegExp(String.fromCodePoint(cp))).join("")}]`, "iu")
    for (let cp = 0; cp <= 0x10ffff; cp += cp < 0x20000 ? 1 : 61) {
      if ((cp >= 0xd800 && cp <= 0xdfff) || cased.has(cp)) continue
      if (anyCased.test(String.fromCodePoint(cp)) || caseFold(cp) !== cp) mismatches.push(cp.toString(16))
    }
    expect(mismatches).toEqual([])
    expect(Math.max(...all)).toBeLessThan(0x1f000)
  }, 60_000)

  it("white space is exactly \\s", () => {
    for (let c = 0; c < 0x10000; c++) expect(isSpace(c)).toBe(/\s/.test(String.fromCharCode(c)))
  })
})

describe("the matcher finds exactly what the regular expression found", () => {
  const check = (alphabet: ReadonlyArray<string>, seed: number, rounds: number, maxNames: number, maxName: number, maxText: number) => {
    const random = seeded(seed)
    const pick = (n: number) => random() % n
    const word = (length: number) => Array.from({ length }, () => alphabet[pick(alphabet.length)]).join("")
    const differences: Array<unknown> = []
    for (let round = 0; round < rounds && differences.length < 5; round++) {
      const keys = [...new Set(Array.from({ length: 1 + pick(maxNames) }, () => word(1 + pick(maxName)).trim().toLowerCase().replace(/\s+/g, " ")))]
        .filter((name) => name !== "")
      const matcher = makeNameMatcher(ordered(keys))
      for (let t = 0; t < 4; t++) {
        const text = word(pick(maxText))
        const expected = referenceScan(keys, text)
        const found = matcher.scan(text)
        if (JSON.stringify(found) !== JSON.stringify(expected)) differences.push({ keys, text, expected, found })
      }
    }
    expect(differences).toEqual([])
  }

  it("on tricky Unicode: case pairs that fold together or not (K and the Kelvin sign, ſ, σ and ς, ı and İ, ß), marks, surrogates", () => {
    const alphabet = ["a", "A", "b", "K", "k", "\u212a", "s", "S", "\u017f", "σ", "ς", "Σ", "ı", "I", "i", "İ", "ß", "ẞ", " ", "  ", "\n", "\u00a0",
      "&", ".", "'", "1", "\u0301", "😀", "\ud800", "\udc00", "é", "É", "-", "_", "ǅ", "ǆ", "Ǆ", "\u1fd3", "\u0390"]
    check(alphabet, 1, 3000, 6, 4, 40)
  })

  it("on names that overlap, nest and share suffixes, white space and boundaries", () => {
    check(["a", "b", " ", "A", "\n", "_", ".", "&"], 7, 3000, 30, 9, 120)
  })

  it("the whole analysis is unchanged on answers naming entities in every way", () => {
    // Independent of the matcher: the analysis of answers with names, aliases, shared names and odd sentences.
    const analysis = makeAnalysis(makeLexiconScorer())
    const words = ["Acme", "acme", "ACME", "Beta", "beta corp", "Beta \n Corp", "H&M", "Monday.com", "great", "not", "bad", ". ", "! ", "\n",
      "e.g.", "12.", "**", "İstanbul", "σ", "ς", "\u212aelvin", "vs.", "(", ")", "love"]
    const random = seeded(3)
    const pick = () => words[random() % words.length]!
    for (let round = 0; round < 300; round++) {
      const subject = {
        brand: { name: pick(), domain: "acme.com", aliases: [pick(), pick()] },
        competitors: [1, 2, 3].map((id) => ({ id, name: pick(), domain: `c${id}.com`, aliases: [pick()] }))
      }
      const analyzer = analysis.compile(subject)
      const text = Array.from({ length: random() % 80 }, pick).join(random() % 2 === 0 ? " " : "")
      const result = analyzer.analyse({ response: text, citations: [], fanouts: [] })
      // Each mention's first occurrence is the reference expression's first match of one of its names.
      const all = [subject.brand, ...subject.competitors]
      const keys = new Map<string, number>()
      all.forEach((entity, index) => {
        for (const raw of [entity.name, ...entity.aliases]) {
          const key = raw.trim().toLowerCase().replace(/\s+/g, " ")
          if (key !== "" && !keys.has(key)) keys.set(key, index)
        }
      })
      const found = referenceScan([...keys.keys()], text)
      const firsts: Array<number> = []
      for (let k = 0; k < found.length; k += 2) {
        const index = keys.get(text.slice(found[k]!, found[k + 1]!).toLowerCase().replace(/\s+/g, " "))
        if (index !== undefined && !firsts.includes(index)) firsts.push(index)
      }
      expect(result.mentions.map((m) => (m.competitorId === null ? 0 : m.competitorId))).toEqual(firsts)
    }
  })
})

describe("linear in the text whatever the names", () => {
  it("20,000 names of 100 characters: ten times the text is about ten times the work, and one step per character on text without names", () => {
    const names = Array.from({ length: 20_000 }, (_, i) => ({ text: `alias ${i} `.padEnd(100, "x"), boundaryBefore: true, boundaryAfter: true }))
    const matcher = makeNameMatcher(names)
    const sentence = "Acme is a great product, alias 17 xxxxxxxxxxxx is not. "
    const text = (n: number) => sentence.repeat(Math.ceil(n / sentence.length)).slice(0, n)
    matcher.scan(text(20_000))
    const small = matcher.lastWork()
    matcher.scan(text(200_000))
    const large = matcher.lastWork()
    expect(large / small).toBeGreaterThan(9)
    expect(large / small).toBeLessThan(11)
    expect(large).toBeLessThan(3 * 200_000)
  })

  it("names that are suffixes of one another: the work per character is bounded by the longest name, not the number of names", () => {
    const names = Array.from({ length: 100 }, (_, i) => ({ text: "a".repeat(i + 1), boundaryBefore: true, boundaryAfter: true }))
    const matcher = makeNameMatcher(names)
    matcher.scan("a".repeat(10_000))
    const small = matcher.lastWork()
    matcher.scan("a".repeat(100_000))
    const large = matcher.lastWork()
    expect(large / small).toBeLessThan(11)
    expect(large).toBeLessThan(102 * 100_000)
  })

  it("sentences: a run of 100,000 marks or list numbers on one line costs linear time (the expression retried every position)", () => {
    const time = (text: string) => {
      const started = performance.now()
      sentenceStarts(text)
      return performance.now() - started
    }
    for (const unit of ["!", "12. "]) {
      time(unit.repeat(1000))
      const small = Math.min(time(unit.repeat(10_000)), time(unit.repeat(10_000)))
      const large = Math.min(time(unit.repeat(100_000)), time(unit.repeat(100_000)))
      // Quadratic would be 100 times; linear is 10 (generous for a shared machine).
      expect(large).toBeLessThan(Math.max(40 * small, 50))
    }
  })
})
