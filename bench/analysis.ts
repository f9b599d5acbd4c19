/**
 * Analysis throughput: observations per second for 1,500-word answers naming 6 entities with
 * 10 citations, on one core (target: at least 2,000/s). Baseline in the same run: the cost of
 * lower-casing and splitting the same answers into words, the least any text analysis must do.
 *
 *   bun run bench/analysis.ts
 */
import { makeAnalysis } from "../src/observations/Analysis.js"
import { makeLexiconScorer } from "../src/observations/Sentiment.js"

const subject = {
  brand: { name: "Northwind CRM", domain: "northwindcrm.com", aliases: ["Northwind"] },
  competitors: [
    { id: 1, name: "Monday.com", domain: "monday.com", aliases: [] },
    { id: 2, name: "H&M", domain: "hm.com", aliases: [] },
    { id: 3, name: "Acme CRM", domain: "acmecrm.com", aliases: ["Acme"] },
    { id: 4, name: "Pipeline.io", domain: "pipeline.io", aliases: [] },
    { id: 5, name: "Orbit Sales", domain: "orbitsales.com", aliases: ["Orbit"] }
  ]
}
const names = ["Northwind CRM", "Monday.com", "H&M", "Acme", "Pipeline.io", "Orbit Sales"]
const filler = ("the team compared several tools for pipeline tracking and reporting while reviewers noted that pricing " +
  "and support quality vary widely between vendors in this crowded category of software products today").split(" ")

const makeAnswer = (seed: number) => {
  const words: Array<string> = []
  let s = seed
  const next = () => (s = (s * 1103515245 + 12345) & 0x7fffffff)
  while (words.length < 1500) {
    const sentenceLength = 12 + (next() % 14)
    const sentence: Array<string> = []
    for (let i = 0; i < sentenceLength; i++) sentence.push(filler[next() % filler.length]!)
    if (next() % 5 === 0) sentence.splice(next() % sentence.length, 0, names[next() % names.length]!)
    if (next() % 7 === 0) sentence.push(["excellent", "great", "poor", "confusing", "reliable"][next() % 5]!)
    words.push(...sentence)
    words[words.length - 1] += "."
  }
  const citations = [
    "https://www.northwindcrm.com/pricing", "https://monday.com/crm", "https://www.reddit.com/r/sales/x", "https://en.wikipedia.org/wiki/CRM",
    "https://www.g2.com/categories/crm", "https://acmecrm.com/", "https://www.youtube.com/watch?v=1", `https://blog${seed}.example.com/a`,
    "https://www.capterra.com/crm", "https://help.pipeline.io/docs"
  ]
  words.push("Shortlist:", "Northwind CRM,", "Monday.com,", "H&M,", "Acme,", "Pipeline.io", "and", "Orbit Sales.")
  return { response: words.join(" "), citations, fanouts: [{ sub_question: "best crm", citations: ["https://g2.com/x"] }] }
}

const answers = Array.from({ length: 200 }, (_, i) => makeAnswer(i + 1))
const analyzer = makeAnalysis(makeLexiconScorer()).compile(subject)
const sample = analyzer.analyse(answers[0]!)
console.log(`answer: ${answers[0]!.response.split(/\s+/).length} words, ${sample.mentions.length} entities mentioned, ${sample.citations.length} citations`)

const measure = (label: string, fn: (i: number) => unknown, seconds = 3) => {
  for (let i = 0; i < 500; i++) fn(i) // warm-up
  let n = 0
  const start = performance.now()
  while (performance.now() - start < seconds * 1000) {
    for (let i = 0; i < 50; i++) fn(n++)
  }
  const rate = n / ((performance.now() - start) / 1000)
  console.log(`${label}: ${Math.round(rate).toLocaleString("en")} observations/s`)
  return rate
}

const baseline = measure("baseline (lower-case + split into words)", (i) => answers[i % answers.length]!.response.toLowerCase().split(/\s+/).length)
const rate = measure("analysis (mentions, rank, sentiment, snippets, citations, buckets)", (i) => analyzer.analyse(answers[i % answers.length]!))
console.log(`ratio to baseline: ${(rate / baseline).toFixed(2)}; target >= 2,000/s: ${rate >= 2000 ? "met" : "NOT met"}`)
