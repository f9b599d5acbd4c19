import { Context, Effect, Layer } from "effect"
import domainLists from "./domains.json"
import { isSpace, makeNameMatcher, type MatcherName } from "./Names.js"
import { Sentiment, sentimentLabel, SentimentLive, type SentimentLabel, type SentimentShape } from "./Sentiment.js"

/**
 * The analysis of one answer observation, exactly docs/observations.md. Pure and synchronous:
 * no I/O, no clock. A brand's entities are compiled once into an Analyzer (the names' automaton,
 * domain maps) and the Analyzer then runs on each observation of that brand, in time linear in the
 * answer whatever the number of names (docs/security.md "Mention matching in one pass").
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

/** The closing marks a sentence end may carry after its `.`, `!` or `?` run. */
const isCloser = (c: number) => c === 34 || c === 39 || c === 0x201d || c === 0x2019 || c === 41 || c === 93
const isEndMark = (c: number) => c === 46 || c === 33 || c === 63

/**
 * The next sentence end at or after `from`, as the expression `/[.!?]+["'”’)\]]*(?=\s|$)|\n/g` would
 * find it, in linear time (that expression retried every position of a long run of marks): a line
 * break, or a whole run of marks with its closers, followed by white space or the end. A run not
 * followed so cannot end a sentence from any position inside it. [start, end) or null.
 */
const nextSentenceEnd = (text: string, from: number): readonly [number, number] | null => {
  const n = text.length
  let i = from
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 10) return [i, i + 1]
    if (!isEndMark(c)) {
      i++
      continue
    }
    let k = i + 1
    while (k < n && isEndMark(text.charCodeAt(k))) k++
    while (k < n && isCloser(text.charCodeAt(k))) k++
    if (k === n || isSpace(text.charCodeAt(k))) return [i, k]
    i = k
  }
  return null
}

/** Whether text[0, index) ends with a line of white space only (or is one): a list number's place. */
const lineBlankBefore = (text: string, index: number): boolean => {
  for (let i = index - 1; i >= 0; i--) {
    const c = text.charCodeAt(i)
    if (c === 10) return true
    if (!isSpace(c)) return false
  }
  return true
}

/**
 * Start offsets of the sentences of a text: a sentence ends at a line break, or at `.`, `!` or `?`
 * followed by white space, unless the word before the period is a known abbreviation, a single
 * letter (an initial) or a list number at the start of a line ("1."). "Monday.com" is one word.
 * Linear in the text: each word and each run of white space is read a bounded number of times.
 */
export const sentenceStarts = (text: string): Array<number> => {
  const starts = [0]
  let from = 0
  let match: readonly [number, number] | null
  while ((match = nextSentenceEnd(text, from)) !== null) {
    const [index, end] = match
    from = end
    if (text.charCodeAt(index) === 46) {
      let wordStart = index
      while (wordStart > 0 && !isSpace(text.charCodeAt(wordStart - 1))) wordStart--
      const word = text.slice(wordStart, index).replace(/^[("'“*_]+/, "").toLowerCase()
      if (word.length === 1 || ABBREVIATIONS.has(word)) continue
      if (/^\d+$/.test(word) && lineBlankBefore(text, wordStart)) continue
    }
    if (end >= text.length) break
    // A sentence of white space only (a line break right after a period) merges into the next.
    const last = starts.length - 1
    if (last > 0 && isBlank(text, starts[last]!, end)) starts[last] = end
    else starts.push(end)
  }
  return starts
}

const isBlank = (text: string, from: number, to: number): boolean => {
  for (let i = from; i < to; i++) if (!isSpace(text.charCodeAt(i))) return false
  return true
}

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
  return snippetOfClean(clean, () => clean.toLowerCase(), occurrence)
}

/** snippetOf of a sentence already cleaned (`lower`: its lower case, asked only for a long sentence). */
const snippetOfClean = (clean: string, lower: () => string, occurrence: string): string => {
  if (clean.length <= MAX_SNIPPET) return clean
  const at = Math.max(0, lower().indexOf(occurrence.toLowerCase()))
  const start = Math.max(0, Math.min(at - 100, clean.length - MAX_SNIPPET))
  let window = clean.slice(start, start + MAX_SNIPPET)
  if (start > 0) window = "…" + window.slice(1)
  if (start + MAX_SNIPPET < clean.length) window = window.slice(0, -1) + "…"
  return window
}

// ---------------------------------------------------------------------------
// Entity names
// ---------------------------------------------------------------------------

const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u

/** The key a matched text is looked up by: lower case, runs of white space as one space. */
const nameKey = (s: string) => s.toLowerCase().replace(/\s+/g, " ")

/**
 * All names and aliases (their keys), in the order one regular expression of them would try them:
 * case-insensitive, longest first, a run of white space in a name matching any run of white space,
 * and a word boundary required only on a side where the name itself has a letter or digit. So "Acme"
 * is not found in "Acmeville", "Monday.com" and "H&M" are found as written, and "Acme's" counts as
 * Acme. Names needing the same boundaries form one alternative each (the first such group holds the
 * longest name), so that order is kept: the matcher (src/observations/Names.ts) finds exactly what
 * that expression would, in one pass whatever the number of names.
 */
const namesInOrder = (names: ReadonlyArray<string>): Array<MatcherName> => {
  const groups = new Map<string, Array<MatcherName>>()
  for (const name of [...names].sort((a, b) => b.length - a.length)) {
    const boundaryBefore = WORD_CHAR.test(name[0]!)
    const boundaryAfter = WORD_CHAR.test(name[name.length - 1]!)
    const key = `${boundaryBefore}|${boundaryAfter}`
    const group = groups.get(key) ?? []
    group.push({ text: name, boundaryBefore, boundaryAfter })
    groups.set(key, group)
  }
  return [...groups.values()].flat()
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
    const matcher = makeNameMatcher(namesInOrder([...byName.keys()]))

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
      const found = matcher.scan(text)
      for (let k = 0; k < found.length; k += 2) {
        const at = found[k]!
        const matched = text.slice(at, found[k + 1]!)
        const index = byName.get(nameKey(matched))
        if (index === undefined) continue
        if (first[index] === -1) {
          first[index] = at
          firstText[index] = matched
          offsets[index] = [at]
        } else offsets[index]!.push(at)
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

      // Entities often share sentences: each sentence is cleaned once, and the sentiment of a set of
      // sentences scored once, so many entities in one long answer do not multiply the work.
      let starts: Array<number> | null = null
      const cleaned = new Map<number, { readonly clean: string; lower: string | undefined }>()
      const scores = new Map<string, number>()
      let scoreSentences: ((indices: ReadonlyArray<number>) => number) | undefined
      const mentions: Array<AnalysedMention> = []
      for (const index of inText) {
        starts ??= sentenceStarts(text)
        const sentenceBounds = (s: number) => [starts![s]!, s + 1 < starts!.length ? starts![s + 1]! : text.length] as const
        const sentences: Array<number> = []
        for (const offset of offsets[index]!) {
          const s = sentenceIndexAt(starts, offset)
          // Offsets ascend, so a sentence seen already is the last one added.
          if (sentences.length > 0 && sentences[sentences.length - 1] === s) continue
          sentences.push(s)
        }
        const key = sentences.join(",")
        let score = scores.get(key)
        if (score === undefined) {
          if (sentiment.sentences !== undefined) {
            scoreSentences ??= sentiment.sentences((s) => text.slice(...sentenceBounds(s)))
            score = clampScore(scoreSentences(sentences))
          } else {
            score = clampScore(sentiment.score(sentences.map((s) => text.slice(...sentenceBounds(s))).join(" ")))
          }
          scores.set(key, score)
        }
        const firstSentence = sentenceIndexAt(starts, first[index]!)
        let sentence = cleaned.get(firstSentence)
        if (sentence === undefined) {
          const [from, to] = sentenceBounds(firstSentence)
          sentence = { clean: cleanSentence(text.slice(from, to)), lower: undefined }
          cleaned.set(firstSentence, sentence)
        }
        const entry = sentence
        mentions.push({
          competitorId: entities[index]!.competitorId,
          entity: entities[index]!.name,
          rank: mentions.length + 1,
          sentiment: score,
          label: sentimentLabel(score),
          snippet: snippetOfClean(entry.clean, () => (entry.lower ??= entry.clean.toLowerCase()), firstText[index]!),
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
