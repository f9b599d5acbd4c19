/**
 * What decoding a query's rows with their row Schema (src/platform/Rows.ts) costs, for the reads
 * returning the most rows on a request path at 90 days in bench/agents.ts and bench/visibility.ts.
 * Rows are built as the drivers hand them (plain objects, Dates for timestamps); each case decodes
 * its rows ROUNDS times after a warm-up and prints the median per query and per row, beside the
 * same-run baseline of a plain copy of the rows (what any reshaping of them costs at least).
 *
 *   bun run bench/row-decode.ts
 */

import { Either, Schema } from "effect"
import { DailyRow, PageRow, ReferralCount } from "../src/agents/Repo.js"
import { DayEngineTotals, DayEntityTotals, DomainTotals, FanoutRow, GapRow, MentionRow } from "../src/visibility/Repo.js"

const ROUNDS = Number(process.env.ROUNDS ?? 200)
const day = (i: number) => new Date(Date.UTC(2026, 0, 1) + (i % 90) * 86_400_000).toISOString().slice(0, 10)
const bots = Array.from({ length: 25 }, (_, i) => `Bot-${i}`)
const engines = ["ai_mode", "ai_overview", "chatgpt", "claude", "copilot", "deepseek", "gemini", "grok", "perplexity"]

const cases: ReadonlyArray<{ readonly name: string; readonly schema: Schema.Schema<any, any>; readonly rows: ReadonlyArray<unknown> }> = [
  {
    // 90 days x 25 bots x 5 status codes (bench/agents.ts), read twice by GET /agents.
    name: "agents daily (crawler_daily, 90d)",
    schema: DailyRow,
    rows: Array.from({ length: 90 * 25 * 5 }, (_, i) => ({
      day: day(i),
      bot: bots[i % 25],
      vendor: "Vendor",
      kind: "training_crawler",
      status: [200, 304, 301, 404, 500][i % 5],
      verification: "unverified",
      hits: i % 997
    }))
  },
  {
    name: "agents referrals (1,000 day/engine/path groups)",
    schema: ReferralCount,
    rows: Array.from({ length: 1000 }, (_, i) => ({ day: day(i), engine: engines[i % 9], path: `/f${i % 20}/page-${i}`, referrals: i % 13 }))
  },
  {
    name: "agents pages (a page of 100 paths, 10 bots each)",
    schema: PageRow,
    rows: Array.from({ length: 100 }, (_, i) => ({
      path: `/f${i % 20}/page-${i}`,
      hits: 1000 - i,
      errors: i,
      uniques: 10,
      bots: bots.slice(0, 10),
      last_seen: new Date()
    }))
  },
  {
    name: "visibility dayEngineTotals (90 days x 9 engines)",
    schema: DayEngineTotals,
    rows: Array.from({ length: 90 * 9 }, (_, i) => ({ day: day(i), engine: engines[i % 9], responses: 800, mentions: 400, cited: 100 }))
  },
  {
    name: "visibility dayEntityTotals (90 days x (9 engines + 5 competitors))",
    schema: DayEntityTotals,
    rows: Array.from({ length: 90 * 14 }, (_, i) => ({
      day: day(i),
      entityId: i % 14 < 9 ? 0 : i % 14,
      engine: i % 14 < 9 ? engines[i % 9] : null,
      mentions: 300,
      rankSum: 700,
      top1: 100,
      top3: 200,
      sentimentSum: 12.5,
      positive: 100,
      neutral: 150,
      negative: 50
    }))
  },
  {
    name: "visibility mentions (500 rows)",
    schema: MentionRow,
    rows: Array.from({ length: 500 }, (_, i) => ({
      id: String(i),
      engine: engines[i % 9],
      prompt: "best option for task 1 in 2026",
      snippet: "a snippet of the answer that mentions the brand",
      rank: 1 + (i % 5),
      label: "neutral",
      citedUrl: i % 2 === 0 ? null : "https://brand0.com/page",
      seenAt: new Date()
    }))
  },
  {
    name: "visibility fan-outs (the 200-group cap x 5 sub-questions, 3 citations each)",
    schema: FanoutRow,
    rows: Array.from({ length: 1000 }, (_, i) => ({
      observationId: i,
      promptNum: i % 103,
      promptText: "best option for task 1 in 2026",
      brandSlug: "brand-0",
      brandName: "Brand 0",
      engine: engines[i % 9],
      day: day(i),
      position: 1 + (i % 5),
      subQuestion: "what is the best option",
      citations: ["https://a.example/1", "https://b.example/2", "https://c.example/3"]
    }))
  },
  {
    name: "visibility domains (320 domains)",
    schema: DomainTotals,
    rows: Array.from({ length: 320 }, (_, i) => ({ domain: `site${i}.example.com`, bucket: "earned", citations: 1000 - i }))
  },
  {
    name: "visibility gap (300 domains, 3 competitors each)",
    schema: GapRow,
    rows: Array.from({ length: 300 }, (_, i) => ({ domain: `site${i}.example.com`, bucket: "earned", opportunity: i, competitorIds: [1, 2, 3] }))
  }
]

const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const timed = (run: () => unknown) => {
  for (let i = 0; i < 20; i++) run()
  const times: Array<number> = []
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now()
    run()
    times.push(performance.now() - t)
  }
  return median(times)
}
const shown = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`)

console.log("| rows | count | decode, median per query | per row | plain copy (baseline) |")
console.log("| --- | --- | --- | --- | --- |")
for (const c of cases) {
  const decode = Schema.decodeUnknownEither(Schema.Array(c.schema))
  if (Either.isLeft(decode(c.rows))) throw new Error(`${c.name}: rows do not decode`)
  const ms = timed(() => decode(c.rows))
  const copy = timed(() => c.rows.map((row) => ({ ...(row as object) })))
  console.log(`| ${c.name} | ${c.rows.length} | ${shown(ms)} | ${((ms * 1000) / c.rows.length).toFixed(2)} µs | ${shown(copy)} |`)
}
