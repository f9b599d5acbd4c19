/**
 * Import throughput end to end on PostgreSQL: one POST /api/v1/me/brands/{slug}/observations with
 * 5,000 NDJSON observations through the whole in-process app (session check, parse, validation,
 * analysis, storage of observations, mentions, citations, fan-outs and rollups). Target: < 5 s.
 * Same-run baselines: the analysis alone over the same records, and the replay of the same body
 * (every observation already stored: parse, validation, analysis and one conflicting insert).
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test bun run bench/import.ts [words per answer, default 300]
 */
import { Client } from "pg"
import { makeAnalysis } from "../src/observations/Analysis.js"
import { makeLexiconScorer } from "../src/observations/Sentiment.js"
import { inProcessApp } from "./support.js"

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const words = Number(process.argv[2] ?? 300)
const schema = `bench_${Date.now().toString(36)}`
const admin = new Client({ connectionString: base })
await admin.connect()
await admin.query(`create schema ${schema}`)
const url = new URL(base)
url.searchParams.set("options", `-c search_path=${schema}`)

const { call, dispose, postJson } = await inProcessApp(url.toString())

const signup = await postJson("/api/v1/auth/signup", { email: "bench@acme.test", password: "correct horse battery", account_name: "Bench" })
const cookie = signup.headers.get("set-cookie")!.split(";")[0]!
await admin.query(`update ${schema}.accounts set plan_id = 'enterprise'`)
await postJson("/api/v1/me/brands", { brand_slug: "northwind", brand_name: "Northwind CRM", domain: "northwindcrm.com", vertical: "saas" }, cookie)
const competitors = ["Monday.com", "H&M", "Acme CRM", "Pipeline.io", "Orbit Sales"]
for (const name of competitors) {
  await postJson("/api/v1/me/brands/northwind/competitors", { name, domain: name.toLowerCase().replace(/[^a-z.]/g, "") + (name.includes(".") ? "" : ".com") }, cookie)
}
const prompts = Array.from({ length: 40 }, (_, i) => `best crm option number ${i}`)
for (const prompt of prompts) await postJson("/api/v1/me/brands/northwind/prompts", { prompt }, cookie)

const filler = "teams compare tools for pipeline tracking and reporting while reviewers note that pricing and support vary".split(" ")
const engines = ["chatgpt", "perplexity", "gemini", "claude", "copilot", "grok", "deepseek", "ai_overview", "ai_mode"]
const records = Array.from({ length: 5000 }, (_, i) => {
  const text: Array<string> = []
  for (let w = 0; w < words; w++) text.push(filler[(i + w * 7) % filler.length]! + (w % 15 === 14 ? "." : ""))
  text.splice(10, 0, "Northwind CRM is excellent.", "Monday.com is popular.", "H&M is fine.", "Acme CRM has poor support.", "Orbit Sales works.")
  return {
    prompt: prompts[i % prompts.length],
    engine: engines[i % engines.length],
    region: i % 2 === 0 ? "US" : "GB",
    language: "en",
    observed_at: new Date(Date.UTC(2026, 10, 1) + Math.floor(i / 720) * 86_400_000 + (i % 720) * 1000).toISOString(),
    response: text.join(" "),
    citations: [
      "https://www.northwindcrm.com/pricing", "https://monday.com/crm", "https://www.reddit.com/r/sales/x", "https://en.wikipedia.org/wiki/CRM",
      "https://www.g2.com/categories/crm", "https://acmecrm.com/", "https://www.youtube.com/watch?v=1", `https://blog${i}.example.com/a`,
      "https://www.capterra.com/crm", "https://help.pipelineio.com/docs"
    ],
    fanouts: [
      { sub_question: "best crm 2026", citations: ["https://g2.com/x", "https://reddit.com/r/crm"] },
      { sub_question: "crm pricing", citations: ["https://capterra.com/y"] }
    ]
  }
})
const body = records.map((r) => JSON.stringify(r)).join("\n")
console.log(`body: ${records.length} observations, ${words}+ words each, ${(body.length / 1e6).toFixed(1)} MB NDJSON`)

const analyzer = makeAnalysis(makeLexiconScorer()).compile({
  brand: { name: "Northwind CRM", domain: "northwindcrm.com", aliases: [] },
  competitors: competitors.map((name, id) => ({ id, name, domain: "x.com", aliases: [] }))
})
let t = performance.now()
for (const r of records) analyzer.analyse(r)
console.log(`baseline, analysis alone: ${((performance.now() - t) / 1000).toFixed(2)} s`)

const importOnce = async (label: string) => {
  const start = performance.now()
  const response = await call("/api/v1/me/brands/northwind/observations", { method: "POST", headers: { cookie, "content-type": "application/json", "sec-fetch-site": "same-origin" }, body })
  const result = (await response.json()) as { imported: number; skipped: number; errors: Array<unknown> }
  const seconds = (performance.now() - start) / 1000
  console.log(`${label}: ${seconds.toFixed(2)} s (${Math.round(records.length / seconds).toLocaleString("en")} observations/s) -> imported ${result.imported}, skipped ${result.skipped}, errors ${result.errors.length}`)
  return seconds
}
const first = await importOnce("import end to end")
await importOnce("replay (all skipped)")
const rows = await admin.query(
  `select (select count(*) from ${schema}.observations)::int as o, (select count(*) from ${schema}.mentions)::int as m,
          (select count(*) from ${schema}.citations)::int as c, (select count(*) from ${schema}.fanout_citations)::int as f`
)
console.log(`stored: ${JSON.stringify(rows.rows[0])}; target < 5 s: ${first < 5 ? "met" : "NOT met"}`)
await dispose()
await admin.query(`drop schema ${schema} cascade`)
await admin.end()
