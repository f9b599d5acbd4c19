import { Effect } from "effect"
import type { AnswerEngine, EngineAnswer } from "./Engines.js"

/**
 * A deterministic simulated answer engine, for the demo and for tests only: it is never
 * configured from the environment and nothing uses it unless handed it explicitly. The same
 * inputs always give the same answer: names of the brand and its competitors in varying order
 * and tone, citations over owned, competitor, ugc, reference and earned domains, and fan-outs.
 */

export interface SimulatedWorld {
  readonly brand: { readonly name: string; readonly domain: string }
  readonly competitors: ReadonlyArray<{ readonly name: string; readonly domain: string }>
  /** Varies the answers between worlds with the same names. */
  readonly seed?: string
}

export interface SimulatedQuestion {
  readonly engine: string
  readonly prompt: string
  readonly region: string
  /** Day number within a generated period (0 = oldest): the brand's visibility drifts up with it. */
  readonly day?: number
  readonly days?: number
  /**
   * Which of several answers to the same question in one scan (0 = the first): each sample draws
   * its own answer from the same rates, so repeated asks disagree the way real engines do.
   */
  readonly sample?: number
}

/** FNV-1a, 32 bits. */
const hash = (text: string) => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** mulberry32: a small seeded generator in [0, 1). */
const generator = (seed: number) => {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The brand's base mention rate per engine (the demo shows differences between engines). */
const ENGINE_BIAS: Readonly<Record<string, number>> = {
  chatgpt: 0.62,
  perplexity: 0.7,
  gemini: 0.5,
  claude: 0.55,
  copilot: 0.45,
  grok: 0.3,
  deepseek: 0.35,
  ai_overview: 0.58,
  ai_mode: 0.52
}

/** Engines that expose fan-out sub-questions in the simulation. */
const FANOUT_ENGINES = new Set(["perplexity", "chatgpt", "gemini", "ai_mode", "copilot"])

// Tone words are in the AFINN lexicon, so the analysis labels them as intended.
const POSITIVE = [
  "is an excellent choice for growing teams",
  "is popular and easy to set up",
  "is a reliable option with great support",
  "is often recommended for its solid integrations",
  "stands out with awesome reporting"
]
const NEUTRAL = [
  "offers a trial and several paid tiers",
  "covers the usual features for this category",
  "is another option to compare",
  "has plans for small and large companies"
]
const NEGATIVE = [
  "gets complaints about confusing pricing",
  "has a poor mobile app according to reviewers",
  "can be frustrating to configure",
  "is disappointing for larger teams"
]

const UGC = [
  "https://www.reddit.com/r/{topic}/comments/{id}",
  "https://www.youtube.com/watch?v={id}",
  "https://www.quora.com/What-is-the-best-{topic}",
  "https://news.ycombinator.com/item?id={id}"
]
const REFERENCE = ["https://en.wikipedia.org/wiki/{Topic}", "https://www.britannica.com/topic/{topic}", "https://www.investopedia.com/terms/{topic}"]
const EARNED = [
  "https://www.techradar.com/best/{topic}",
  "https://www.g2.com/categories/{topic}",
  "https://www.capterra.com/{topic}-software",
  "https://www.forbes.com/advisor/{topic}",
  "https://www.pcmag.com/picks/the-best-{topic}",
  "https://zapier.com/blog/best-{topic}"
]

const pick = <A>(random: () => number, items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

const slugOf = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "topic"

const fill = (template: string, random: () => number, topic: string) =>
  template
    .replace("{topic}", topic)
    .replace("{Topic}", topic.charAt(0).toUpperCase() + topic.slice(1).replace(/-/g, "_"))
    .replace("{id}", Math.floor(random() * 1e9).toString(36))

/** One simulated answer. */
export const simulateAnswer = (world: SimulatedWorld, question: SimulatedQuestion): EngineAnswer => {
  const sample = question.sample ?? 0
  const random = generator(
    hash(`${world.seed ?? ""}|${question.engine}|${question.region}|${question.prompt}|${question.day ?? 0}${sample > 0 ? `|${sample}` : ""}`)
  )
  const topic = slugOf(question.prompt.split(" ").slice(-3).join(" "))
  const progress = question.days !== undefined && question.days > 1 ? (question.day ?? 0) / (question.days - 1) : 0.5
  const regionShift = question.region === "US" ? 0.05 : -0.08
  const brandRate = Math.min(0.95, Math.max(0.05, (ENGINE_BIAS[question.engine] ?? 0.5) + regionShift - 0.1 + 0.2 * progress))

  const entities: Array<{ name: string; domain: string; own: boolean }> = []
  if (random() < brandRate) entities.push({ ...world.brand, own: true })
  world.competitors.forEach((c, i) => {
    if (random() < 0.75 - i * 0.1) entities.push({ ...c, own: false })
  })
  // Shuffle, then let the brand move up a little as the period goes on.
  for (let i = entities.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[entities[i], entities[j]] = [entities[j]!, entities[i]!]
  }

  const lines: Array<string> = [`Here is an overview for "${question.prompt}".`, ""]
  entities.forEach((entity, i) => {
    const roll = random()
    const tone = entity.own
      ? roll < 0.6 ? POSITIVE : roll < 0.9 ? NEUTRAL : NEGATIVE
      : roll < 0.4 ? POSITIVE : roll < 0.8 ? NEUTRAL : NEGATIVE
    lines.push(`${i + 1}. **${entity.name}** ${pick(random, tone)}.`)
  })
  if (entities.length === 0) lines.push("No single product fits every need; compare a few options before deciding.")
  else lines.push("", "Compare pricing and integrations before you decide.")

  const citations: Array<string> = []
  const owned = entities.filter((e) => random() < (e.own ? 0.5 : 0.3))
  for (const entity of owned) citations.push(`https://www.${entity.domain}/${pick(random, ["pricing", "features", "blog/guide", "customers"])}`)
  if (random() < 0.6) citations.push(fill(pick(random, UGC), random, topic))
  if (random() < 0.35) citations.push(fill(pick(random, REFERENCE), random, topic))
  const earned = 1 + Math.floor(random() * 3)
  for (let i = 0; i < earned; i++) citations.push(fill(pick(random, EARNED), random, topic))
  // Now and then a competitor's site is cited without the competitor being named.
  const unnamed = world.competitors.find((c) => !entities.some((e) => e.name === c.name))
  if (unnamed !== undefined && random() < 0.15) citations.push(`https://${unnamed.domain}/compare`)

  const fanouts: Array<{ sub_question: string; citations: Array<string> }> = []
  if (FANOUT_ENGINES.has(question.engine) && random() < 0.7) {
    const subQuestions = [`${question.prompt} 2026`, `${question.prompt} reviews`, `${topic.replace(/-/g, " ")} pricing comparison`]
    const n = 1 + Math.floor(random() * 3)
    for (let i = 0; i < n; i++) {
      fanouts.push({
        sub_question: subQuestions[i]!,
        citations: [fill(pick(random, EARNED), random, topic), ...(random() < 0.5 ? [fill(pick(random, UGC), random, topic)] : [])]
      })
    }
  }
  // When only competitors are named, now and then a niche review site of the first one is cited: a domain
  // seen with competitors and never with the brand (what GET /industry/gap shows). Drawn last, so that
  // everything above stays as it was.
  const named = entities.filter((e) => !e.own)
  const brandNamed = entities.some((e) => e.own) || question.prompt.toLowerCase().includes(world.brand.name.toLowerCase())
  if (named.length > 0 && !brandNamed && random() < 0.2) {
    citations.push(`https://${named[0]!.domain.replace(/\.[a-z]+$/, "")}-reviews.example.net/${topic}`)
  }
  return { response: lines.join("\n"), citations: [...new Set(citations)], fanouts }
}

/** The simulated engine behind the AnswerEngine interface (the scanner's tests use it). */
export const makeSimulatedEngine = (slug: string, world: SimulatedWorld): AnswerEngine => ({
  slug,
  ask: (question) => Effect.sync(() => simulateAnswer(world, { engine: slug, prompt: question.prompt, region: question.region }))
})
