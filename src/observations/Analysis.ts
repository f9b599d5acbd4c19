import { Context, Effect, Layer } from "effect"
import domainLists from "./domains.json"
import { Sentiment, sentimentLabel, SentimentLive, type SentimentLabel, type SentimentShape } from "./Sentiment.js"

/**
 * The analysis of one answer observation, exactly docs/observations.md. Pure and synchronous:
 * no I/O, no clock. A brand's entities are compiled once into an Analyzer (one regular
 * expression, domain maps) and the Analyzer then runs on each observation of that brand.
 */

export const BUCKETS = ["owned", "competitor", "ugc", "reference", "earned"] as const
export type Bucket = (typeof BUCKETS)[number]

export interface EntityInput {
  readonly name: string
  readonly domain: string
  readonly aliases: ReadonlyArray<string>
}

/** What an observation is analysed against: the brand and its tracked competitors. */
export interface AnalysisSubject {
  readonly brand: EntityInput
  readonly competitors: ReadonlyArray<EntityInput & { readonly id: number }>
}

export interface RawAnswer {
  readonly response: string
  readonly citations: ReadonlyArray<string>
  readonly fanouts: ReadonlyArray<{ readonly sub_question: string; readonly citations: ReadonlyArray<string> }>
}

export interface AnalysedCitation {
  readonly position: number
  readonly url: string
  readonly domain: string
  readonly bucket: Bucket
}

export interface AnalysedMention {
  /** null for the brand itself. */
  readonly competitorId: number | null
  readonly entity: string
  readonly rank: number
  readonly sentiment: number
  readonly label: SentimentLabel
  readonly snippet: string
  readonly citedUrl: string | null
  readonly viaCitationOnly: boolean
}

export interface AnalysedFanout {
  readonly position: number
  readonly subQuestion: string
  readonly citations: ReadonlyArray<AnalysedCitation>
}

export interface AnalysedAnswer {
  /** Ordered by rank. */
  readonly mentions: ReadonlyArray<AnalysedMention>
  readonly citations: ReadonlyArray<AnalysedCitation>
  readonly fanouts: ReadonlyArray<AnalysedFanout>
  readonly brandMentioned: boolean
  readonly brandRank: number | null
  readonly brandCited: boolean
  readonly mentionedCompetitors: number
}

export interface Analyzer {
  readonly analyse: (answer: RawAnswer) => AnalysedAnswer
}

export interface AnalysisShape {
  readonly compile: (subject: AnalysisSubject) => Analyzer
}

export class Analysis extends Context.Tag("Analysis")<Analysis, AnalysisShape>() {}

// ---------------------------------------------------------------------------
// Domains
// ---------------------------------------------------------------------------

/** Host of a URL, lower case, without a trailing dot and without a leading `www.`; null when not an http(s) URL. */
export const domainOf = (url: string): string | null => {
  let host: string
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null
    host = parsed.hostname
  } catch {
    return null
  }
  if (host === "") return null
  host = host.toLowerCase()
  if (host.endsWith(".")) host = host.slice(0, -1)
  if (host.startsWith("www.")) host = host.slice(4)
  return host === "" ? null : host
}

/** The value of the most specific domain the host is on (the host itself, then each parent), if any. */
const lookupOnDomain = <A>(map: ReadonlyMap<string, A>, host: string): A | undefined => {
  let suffix = host
  for (;;) {
    const hit = map.get(suffix)
    if (hit !== undefined) return hit
    const dot = suffix.indexOf(".")
    if (dot === -1) return undefined
    suffix = suffix.slice(dot + 1)
  }
}

/** The ugc and reference lists of domains.json. */
const LIST_BUCKETS: ReadonlyMap<string, Bucket> = new Map<string, Bucket>([
  ...domainLists.reference.map((domain) => [domain, "reference"] as const),
  ...domainLists.ugc.map((domain) => [domain, "ugc"] as const)
])

export const listBucket = (host: string): Bucket => lookupOnDomain(LIST_BUCKETS, host) ?? "earned"

// ---------------------------------------------------------------------------
// Sentences and snippets
// ---------------------------------------------------------------------------

/** Words whose trailing period does not end a sentence. */
const ABBREVIATIONS = new Set([
  "e.g", "i.e", "eg", "ie", "vs", "mr", "mrs", "ms", "dr", "prof", "inc", "ltd", "co", "corp", "st", "jr", "sr",
  "approx", "no", "fig", "al", "cf", "u.s", "u.k", "e.u"
])

const SENTENCE_END = /[.!?]+["'”’)\]]*(?=\s|$)|\n/g

/**
 * Start offsets of the sentences of a text: a sentence ends at a line break, or at `.`, `!` or `?`
 * followed by white space, unless the word before the period is a known abbreviation, a single
 * letter (an initial) or a list number at the start of a line ("1."). "Monday.com" is one word.
 */
export const sentenceStarts = (text: string): Array<number> => {
  const starts = [0]
  SENTENCE_END.lastIndex = 0
  let match: RegExpExecArray | null
  while ((match = SENTENCE_END.exec(text)) !== null) {
    const end = match.index + match[0].length
    if (match[0] !== "\n" && match[0][0] === ".") {
      let wordStart = match.index
      while (wordStart > 0 && !/\s/.test(text[wordStart - 1]!)) wordStart--
      const word = text.slice(wordStart, match.index).replace(/^[("'“*_]+/, "").toLowerCase()
      if (word.length === 1 || ABBREVIATIONS.has(word)) continue
      if (/^\d+$/.test(word) && (wordStart === 0 || text[wordStart - 1] === "\n" || /^\s*$/.test(lineBefore(text, wordStart)))) continue
    }
    if (end >= text.length) break
    // A sentence of white space only (a line break right after a period) merges into the next.
    const last = starts.length - 1
    if (last > 0 && /^\s*$/.test(text.slice(starts[last]!, end))) starts[last] = end
    else starts.push(end)
  }
  return starts
}

const lineBefore = (text: string, index: number) => text.slice(text.lastIndexOf("\n", index - 1) + 1, index)

const sentenceIndexAt = (starts: ReadonlyArray<number>, offset: number): number => {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (starts[mid]! <= offset) lo = mid
    else hi = mid - 1
  }
  return lo
}

const MAX_SNIPPET = 300

/** A sentence as shown: markdown emphasis, list markers and headings removed, white space collapsed. */
const cleanSentence = (sentence: string) =>
  sentence
    .replace(/\*\*|__|`/g, "")
    .replace(/^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+)/, "")
    .replace(/\s+/g, " ")
    .trim()

/** The sentence, at most 300 characters: a longer one is cut around the occurrence, with "…" at each cut. */
export const snippetOf = (sentence: string, occurrence: string): string => {
  const clean = cleanSentence(sentence)
  if (clean.length <= MAX_SNIPPET) return clean
  const at = Math.max(0, clean.toLowerCase().indexOf(occurrence.toLowerCase()))
  const start = Math.max(0, Math.min(at - 100, clean.length - MAX_SNIPPET))
  let window = clean.slice(start, start + MAX_SNIPPET)
  if (start > 0) window = "…" + window.slice(1)
  if (start + MAX_SNIPPET < clean.length) window = window.slice(0, -1) + "…"
  return window
}

// ---------------------------------------------------------------------------
// Entity names
// ---------------------------------------------------------------------------

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u
const NOT_WORD_BEFORE = "(?<![\\p{L}\\p{N}\\p{M}_])"
const NOT_WORD_AFTER = "(?![\\p{L}\\p{N}\\p{M}_])"

/** The key a matched text is looked up by: lower case, runs of white space as one space. */
const nameKey = (s: string) => s.toLowerCase().replace(/\s+/g, " ")

/**
 * One regular expression for all names and aliases: case-insensitive, longest first, a run of
 * white space in a name matching any run of white space, and a word boundary required only on a
 * side where the name itself has a letter or digit. So "Acme" is not found in "Acmeville",
 * "Monday.com" and "H&M" are found as written, and "Acme's" counts as Acme.
 */
const namePattern = (names: ReadonlyArray<string>): RegExp | null => {
  if (names.length === 0) return null
  // Names grouped by which sides need a boundary, so each group shares one look-behind/look-ahead.
  const groups = new Map<string, Array<string>>()
  for (const name of [...names].sort((a, b) => b.length - a.length)) {
    const before = WORD_CHAR.test(name[0]!) ? NOT_WORD_BEFORE : ""
    const after = WORD_CHAR.test(name[name.length - 1]!) ? NOT_WORD_AFTER : ""
    const body = name.split(/\s+/).map(escapeRegExp).join("\\s+")
    const key = before + "|" + after
    const group = groups.get(key) ?? []
    group.push(body)
    groups.set(key, group)
  }
  const parts = [...groups.entries()].map(([key, bodies]) => {
    const [before, after] = key.split("|") as [string, string]
    return `${before}(?:${bodies.join("|")})${after}`
  })
  return new RegExp(parts.join("|"), "giu")
}

interface CompiledEntity {
  readonly competitorId: number | null
  readonly name: string
}

// ---------------------------------------------------------------------------
// The analysis
// ---------------------------------------------------------------------------

export const makeAnalysis = (sentiment: SentimentShape): AnalysisShape => ({
  compile: (subject) => {
    const entities: Array<CompiledEntity> = [
      { competitorId: null, name: subject.brand.name },
      ...subject.competitors.map((c) => ({ competitorId: c.id, name: c.name }))
    ]
    const inputs: ReadonlyArray<EntityInput> = [subject.brand, ...subject.competitors]

    // Names and aliases -> entity index; the brand first, so a name shared with a competitor is the brand's.
    const byName = new Map<string, number>()
    inputs.forEach((entity, index) => {
      for (const raw of [entity.name, ...entity.aliases]) {
        const name = raw.trim()
        if (name === "") continue
        const key = nameKey(name)
        if (!byName.has(key)) byName.set(key, index)
      }
    })
    const pattern = namePattern([...byName.keys()])

    // Domains -> entity index (the brand's own domain first).
    const byDomain = new Map<string, number>()
    inputs.forEach((entity, index) => {
      const domain = entity.domain.trim().toLowerCase().replace(/^www\./, "")
      if (domain !== "" && !byDomain.has(domain)) byDomain.set(domain, index)
    })

    const classify = (url: string, position: number): { citation: AnalysedCitation; entity: number | undefined } | null => {
      const domain = domainOf(url)
      if (domain === null) return null
      const entity = lookupOnDomain(byDomain, domain)
      const bucket: Bucket = entity === 0 ? "owned" : entity !== undefined ? "competitor" : listBucket(domain)
      return { citation: { position, url, domain, bucket }, entity }
    }

    const analyse = (answer: RawAnswer): AnalysedAnswer => {
      const text = answer.response
      const count = entities.length

      // Text occurrences: first offset and the matched text per entity, all offsets for sentiment.
      const first = new Array<number>(count).fill(-1)
      const firstText = new Array<string>(count).fill("")
      const offsets: Array<Array<number> | undefined> = new Array(count)
      if (pattern !== null && text.length > 0) {
        pattern.lastIndex = 0
        let match: RegExpExecArray | null
        while ((match = pattern.exec(text)) !== null) {
          const index = byName.get(nameKey(match[0]))
          if (index === undefined) continue
          if (first[index] === -1) {
            first[index] = match.index
            firstText[index] = match[0]
            offsets[index] = [match.index]
          } else offsets[index]!.push(match.index)
        }
      }

      // Citations: domain, bucket, and the entities they are on (first one each).
      const citations: Array<AnalysedCitation> = []
      const citedUrl = new Array<string | null>(count).fill(null)
      const citedOrder: Array<number> = []
      for (const url of answer.citations) {
        const hit = classify(url, citations.length + 1)
        if (hit === null) continue
        citations.push(hit.citation)
        if (hit.entity !== undefined && citedUrl[hit.entity] === null) {
          citedUrl[hit.entity] = url
          citedOrder.push(hit.entity)
        }
      }

      const fanouts: Array<AnalysedFanout> = answer.fanouts.map((fanout, i) => {
        const cited: Array<AnalysedCitation> = []
        for (const url of fanout.citations) {
          const hit = classify(url, cited.length + 1)
          if (hit !== null) cited.push(hit.citation)
        }
        return { position: i + 1, subQuestion: fanout.sub_question, citations: cited }
      })

      // Rank: text mentions by first occurrence, then citation-only ones in citation order.
      const inText: Array<number> = []
      for (let i = 0; i < count; i++) if (first[i]! >= 0) inText.push(i)
      inText.sort((a, b) => first[a]! - first[b]!)
      const citationOnly = citedOrder.filter((i) => first[i] === -1)

      let starts: Array<number> | null = null
      const mentions: Array<AnalysedMention> = []
      for (const index of inText) {
        starts ??= sentenceStarts(text)
        const sentenceBounds = (s: number) => [starts![s]!, s + 1 < starts!.length ? starts![s + 1]! : text.length] as const
        const seen = new Set<number>()
        const parts: Array<string> = []
        for (const offset of offsets[index]!) {
          const s = sentenceIndexAt(starts, offset)
          if (seen.has(s)) continue
          seen.add(s)
          const [from, to] = sentenceBounds(s)
          parts.push(text.slice(from, to))
        }
        const score = clampScore(sentiment.score(parts.join(" ")))
        const [from, to] = sentenceBounds(sentenceIndexAt(starts, first[index]!))
        mentions.push({
          competitorId: entities[index]!.competitorId,
          entity: entities[index]!.name,
          rank: mentions.length + 1,
          sentiment: score,
          label: sentimentLabel(score),
          snippet: snippetOf(text.slice(from, to), firstText[index]!),
          citedUrl: citedUrl[index]!,
          viaCitationOnly: false
        })
      }
      for (const index of citationOnly) {
        mentions.push({
          competitorId: entities[index]!.competitorId,
          entity: entities[index]!.name,
          rank: mentions.length + 1,
          sentiment: 0,
          label: "neutral",
          snippet: "",
          citedUrl: citedUrl[index]!,
          viaCitationOnly: true
        })
      }

      const brand = mentions.find((m) => m.competitorId === null)
      return {
        mentions,
        citations,
        fanouts,
        brandMentioned: brand !== undefined,
        brandRank: brand?.rank ?? null,
        brandCited: citedUrl[0] !== null,
        mentionedCompetitors: mentions.length - (brand === undefined ? 0 : 1)
      }
    }

    return { analyse }
  }
})

const clampScore = (score: number) => (Number.isFinite(score) ? Math.max(-1, Math.min(1, score)) : 0)

/** The Analysis service over whatever Sentiment scorer is provided. */
export const AnalysisFromSentiment = Layer.effect(Analysis, Effect.map(Sentiment, makeAnalysis))

/** The default: the AFINN lexicon scorer. */
export const AnalysisLive = AnalysisFromSentiment.pipe(Layer.provide(SentimentLive))
