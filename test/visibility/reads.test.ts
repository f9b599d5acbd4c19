import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { BrandsRepo } from "../../src/brands/Repo.js"
import { domainOf } from "../../src/observations/Analysis.js"
import { ObservationsRepo, type StoredObservation } from "../../src/observations/Repo.js"
import { periodOf } from "../../src/platform/Days.js"
import { keywordsOf, tiersOf, VISIBILITY_DEFAULTS } from "../../src/visibility/Visibility.js"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { query } from "./runtime.js"

/** Raw SQL on the app's own database (the test runtime holds its SqlClient). */
const sqlOf = (text: string) => query<Record<string, unknown>>(text) as unknown as Effect.Effect<ReadonlyArray<Record<string, unknown>>>

/**
 * The thirteen visibility reads against a hand-built fixture, every figure computed by
 * hand below (docs/visibility.md). Runs on the database back ends only: the "fake" back end holds
 * no rollups (its aggregates are empty; test/spine.test.ts and test/isolation.test.ts cover it).
 *
 * "Now" is fixed at 2026-03-15T12:00:00Z through the app's Clock, so today (UTC) is 2026-03-15:
 *   7d  = 03-09..03-15, previous 03-02..03-08
 *   30d = 02-14..03-15, previous 01-15..02-13
 *   90d = 2025-12-16..03-15
 *
 * Account A (growth plan): brands acme (Acme, acme.com, US/en, added first = primary) and bolt
 * (Bolt, bolt.io, GB/en, added last = newest). Competitors of acme: Globex (globex.com, pinned),
 * Initech (initech.com); of bolt: Zenith (zenith.com). Prompts: acme P1 "best crm" (crm),
 * P2 "crm pricing" (pricing), P3 "crm for startups" (crm); bolt Q1 "fast scooters" (mobility),
 * Q2 "scooter battery life" (mobility, never observed).
 *
 * Observations (mentions as entity rank/sentiment; sentiment > 0.1 positive, < -0.1 negative):
 *   id   day/time (UTC)      prompt engine      region  mentions                              answer citations
 *   A1   03-15 08:00         P1  chatgpt     US  Acme 1/+.5, Globex 2/0             acme.com/a, reddit.com/r/x
 *   A2   03-15 09:00         P1  perplexity  US  Globex 1/-.5, Initech 2/+.5         globex.com/p, g2.com/x   fan-outs: "crm list" [g2.com/list], "crm prices" []
 *   A3   03-15 10:00         P2  gemini      GB  Initech 1/-.5, Acme 2/0            en.wikipedia.org/wiki/CRM, blog.acme.com/x
 *   A13  03-15 11:00         P3  chatgpt     US  -                                  reddit.com/r/q
 *   A4   03-14 08:00         P1  chatgpt     US  Acme 1/-.5                         -
 *   A5   03-14 08:00         P3  chatgpt     GB  -                                  news.example.org/a
 *   A14  03-14 09:00         P2  gemini      US  Acme 1/+.5, Initech 2/+.5           initech.com/z, acme.com/c
 *   A12  03-13 10:00         P1  gemini      GB/fr Acme 1/0                         lemonde.fr/a
 *   A6   03-09 00:00:00      P2  perplexity  US  Globex 1/+.5, Initech 2/0, Acme 3/+.5  reddit.com/r/y, reddit.com/r/z   fan-out: "pricing tiers" [capterra.com/a, reddit.com/r/p]
 *   A7   03-08 23:59:59      P2  perplexity  US  Globex 1/+.5                       news.example.org/b       fan-out: "old question" []
 *   A8   03-05 12:00         P1  chatgpt     US  Acme 1/+.5, Globex 2/-.5            acme.com/b
 *   A9   02-03 12:00         P3  gemini      US  Globex 1/0                         forum.globex-fans.net/t  fan-out: "crm for founders" []
 *   A10  2025-12-05 12:00    P1  chatgpt     US  Acme 1/+.5                         -            (outside every range)
 *   A11  03-16 01:00         P1  chatgpt     US  Acme 1/+.5                         future.example.com/x (tomorrow: outside)
 *   B1   03-15 07:00         Q1  chatgpt     GB  Bolt 1/+.5, Zenith 2/0             bolt.io/x, reddit.com/r/s   fan-out: "scooter range" [zenith.com/r]
 *   B5   03-15 06:00         Q1  chatgpt     GB  -                                  -
 *   B4   03-14 07:00         Q1  chatgpt     GB  Zenith 1/+.5, Bolt 2/0             zenith.com/q
 *   B2   03-12 07:00         Q1  gemini      GB  Zenith 1/-.5                       zenith.com/y
 *   B3   03-01 07:00         Q1  perplexity  US  Bolt 1/0                           -
 * All languages are en but A12's (fr). Account B has its own brand "acme" (a slug A also uses) with one
 * observation, which must never show in A's answers (and A's in B's).
 */

const NOW = new Date("2026-03-15T12:00:00Z")

type Entity = "Acme" | "Globex" | "Initech" | "Bolt" | "Zenith" | "Other"
interface Spec {
  readonly id: string
  readonly brand: "acme" | "bolt" | "b-acme"
  readonly prompt: string
  readonly engine: string
  readonly region: string
  readonly language?: string
  readonly at: string
  readonly mentions: ReadonlyArray<readonly [Entity, number, number]>
  readonly citations: ReadonlyArray<string>
  readonly fanouts?: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
}

const FIXTURE: ReadonlyArray<Spec> = [
  { id: "A1", brand: "acme", prompt: "P1", engine: "chatgpt", region: "US", at: "2026-03-15T08:00:00Z", mentions: [["Acme", 1, 0.5], ["Globex", 2, 0]], citations: ["https://acme.com/a", "https://reddit.com/r/x"] },
  { id: "A2", brand: "acme", prompt: "P1", engine: "perplexity", region: "US", at: "2026-03-15T09:00:00Z", mentions: [["Globex", 1, -0.5], ["Initech", 2, 0.5]], citations: ["https://globex.com/p", "https://www.g2.com/x"], fanouts: [["crm list", ["https://g2.com/list"]], ["crm prices", []]] },
  { id: "A3", brand: "acme", prompt: "P2", engine: "gemini", region: "GB", at: "2026-03-15T10:00:00Z", mentions: [["Initech", 1, -0.5], ["Acme", 2, 0]], citations: ["https://en.wikipedia.org/wiki/CRM", "https://blog.acme.com/x"] },
  { id: "A13", brand: "acme", prompt: "P3", engine: "chatgpt", region: "US", at: "2026-03-15T11:00:00Z", mentions: [], citations: ["https://reddit.com/r/q"] },
  { id: "A4", brand: "acme", prompt: "P1", engine: "chatgpt", region: "US", at: "2026-03-14T08:00:00Z", mentions: [["Acme", 1, -0.5]], citations: [] },
  { id: "A5", brand: "acme", prompt: "P3", engine: "chatgpt", region: "GB", at: "2026-03-14T08:00:00Z", mentions: [], citations: ["https://news.example.org/a"] },
  { id: "A14", brand: "acme", prompt: "P2", engine: "gemini", region: "US", at: "2026-03-14T09:00:00Z", mentions: [["Acme", 1, 0.5], ["Initech", 2, 0.5]], citations: ["https://initech.com/z", "https://acme.com/c"] },
  { id: "A12", brand: "acme", prompt: "P1", engine: "gemini", region: "GB", language: "fr", at: "2026-03-13T10:00:00Z", mentions: [["Acme", 1, 0]], citations: ["https://lemonde.fr/a"] },
  { id: "A6", brand: "acme", prompt: "P2", engine: "perplexity", region: "US", at: "2026-03-09T00:00:00Z", mentions: [["Globex", 1, 0.5], ["Initech", 2, 0], ["Acme", 3, 0.5]], citations: ["https://reddit.com/r/y", "https://reddit.com/r/z"], fanouts: [["pricing tiers", ["https://capterra.com/a", "https://reddit.com/r/p"]]] },
  { id: "A7", brand: "acme", prompt: "P2", engine: "perplexity", region: "US", at: "2026-03-08T23:59:59Z", mentions: [["Globex", 1, 0.5]], citations: ["https://news.example.org/b"], fanouts: [["old question", []]] },
  { id: "A8", brand: "acme", prompt: "P1", engine: "chatgpt", region: "US", at: "2026-03-05T12:00:00Z", mentions: [["Acme", 1, 0.5], ["Globex", 2, -0.5]], citations: ["https://acme.com/b"] },
  { id: "A9", brand: "acme", prompt: "P3", engine: "gemini", region: "US", at: "2026-02-03T12:00:00Z", mentions: [["Globex", 1, 0]], citations: ["https://forum.globex-fans.net/t"], fanouts: [["crm for founders", []]] },
  { id: "A10", brand: "acme", prompt: "P1", engine: "chatgpt", region: "US", at: "2025-12-05T12:00:00Z", mentions: [["Acme", 1, 0.5]], citations: [] },
  { id: "A11", brand: "acme", prompt: "P1", engine: "chatgpt", region: "US", at: "2026-03-16T01:00:00Z", mentions: [["Acme", 1, 0.5]], citations: ["https://future.example.com/x"] },
  { id: "B1", brand: "bolt", prompt: "Q1", engine: "chatgpt", region: "GB", at: "2026-03-15T07:00:00Z", mentions: [["Bolt", 1, 0.5], ["Zenith", 2, 0]], citations: ["https://bolt.io/x", "https://reddit.com/r/s"], fanouts: [["scooter range", ["https://zenith.com/r"]]] },
  { id: "B5", brand: "bolt", prompt: "Q1", engine: "chatgpt", region: "GB", at: "2026-03-15T06:00:00Z", mentions: [], citations: [] },
  { id: "B4", brand: "bolt", prompt: "Q1", engine: "chatgpt", region: "GB", at: "2026-03-14T07:00:00Z", mentions: [["Zenith", 1, 0.5], ["Bolt", 2, 0]], citations: ["https://zenith.com/q"] },
  { id: "B2", brand: "bolt", prompt: "Q1", engine: "gemini", region: "GB", at: "2026-03-12T07:00:00Z", mentions: [["Zenith", 1, -0.5]], citations: ["https://zenith.com/y"] },
  { id: "B3", brand: "bolt", prompt: "Q1", engine: "perplexity", region: "US", at: "2026-03-01T07:00:00Z", mentions: [["Bolt", 1, 0]], citations: [] },
  // Account B's brand "acme" (another account): one observation that must stay invisible to A.
  { id: "X1", brand: "b-acme", prompt: "R1", engine: "chatgpt", region: "US", at: "2026-03-15T08:30:00Z", mentions: [["Other", 1, 0.5]], citations: ["https://secret-b.example/x"], fanouts: [["secret question", []]] }
]

const BUCKET: Record<string, string> = {
  "acme.com": "owned",
  "blog.acme.com": "owned",
  "bolt.io": "owned",
  "globex.com": "competitor",
  "initech.com": "competitor",
  "zenith.com": "competitor",
  "reddit.com": "ugc",
  "en.wikipedia.org": "reference"
}
const bucketOf = (domain: string) => (BUCKET[domain] ?? "earned") as "owned"

const label = (score: number) => (score > 0.1 ? "positive" : score < -0.1 ? "negative" : "neutral")

/** The fields of docs/visibility.md (test/visibility/intervals.test.ts checks them): left out here unless expected. */
const INTERVAL_FIELDS = new Set([
  "mention_rate", "mention_rate_ci95", "citation_rate_ci95", "per_engine_n", "per_engine_ci95", "n", "score_ci95",
  "delta_ci95", "significant", "ai_presence_score_ci95", "share_ci95"
])

/** Deep equality where numbers compare to 9 decimals (ratios such as 5/13). */
const expectClose = (actual: unknown, expected: unknown, path = "$"): void => {
  if (typeof expected === "number") {
    if (typeof actual !== "number") throw new Error(`${path}: expected a number, got ${JSON.stringify(actual)}`)
    if (Math.abs(actual - expected) > 1e-9) throw new Error(`${path}: expected ${expected}, got ${actual}`)
    return
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) throw new Error(`${path}: expected an array, got ${JSON.stringify(actual)}`)
    if (actual.length !== expected.length) {
      throw new Error(`${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`)
    }
    expected.forEach((item, i) => expectClose(actual[i], item, `${path}[${i}]`))
    return
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object") throw new Error(`${path}: expected an object, got ${JSON.stringify(actual)}`)
    expect(Object.keys(actual as object).filter((key) => key in expected || !INTERVAL_FIELDS.has(key)).sort()).toEqual(
      Object.keys(expected).sort()
    )
    for (const [key, value] of Object.entries(expected)) expectClose((actual as Record<string, unknown>)[key], value, `${path}.${key}`)
    return
  }
  expect(actual).toEqual(expected)
}

const stats = (avg_rank: number, top1_share: number, top3_share: number, mentions: number) => ({ avg_rank, top1_share, top3_share, mentions })
const ZERO = stats(0, 0, 0, 0)

for (const backend of databaseBackends()) {
  describe(`visibility reads on ${backend}`, () => {
    let app: TestApp
    let key: string
    let keyB: string
    let cookieA: string
    const num: Record<string, number> = {}

    beforeAll(async () => {
      // A fan-out group cap of 3, so that 90d (4 groups) is truncated and 30d (3 groups) is not.
      app = await makeTestApp(backend, { now: NOW, visibility: { fanoutGroupCap: 3 } })
      cookieA = await signup(app, "a@reads.test")
      await app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail("a@reads.test", "growth")))
      key = (await createKey(app, cookieA)).key
      await createBrand(app, cookieA, "acme", { brand_name: "Acme", domain: "acme.com" })
      await createBrand(app, cookieA, "bolt", { brand_name: "Bolt", domain: "bolt.io", primary_region: "GB", primary_language: "en" })
      const post = (path: string, body: unknown, cookie = cookieA) =>
        app.fetch(path, { method: "POST", headers: { "content-type": "application/json", cookie }, body: JSON.stringify(body) })
      for (const [slug, name, domain, pinned] of [["acme", "Globex", "globex.com", true], ["acme", "Initech", "initech.com", false], ["bolt", "Zenith", "zenith.com", false]] as const) {
        expect((await post(`/api/v1/me/brands/${slug}/competitors`, { name, domain, pinned })).status).toBe(201)
      }
      for (const [slug, prompt, topic] of [
        ["acme", "best crm", "crm"],
        ["acme", "crm pricing", "pricing"],
        ["acme", "crm for startups", "crm"],
        ["bolt", "fast scooters", "mobility"],
        ["bolt", "scooter battery life", "mobility"]
      ] as const) {
        expect((await post(`/api/v1/me/brands/${slug}/prompts`, { prompt, topic })).status).toBe(201)
      }
      const cookieB = await signup(app, "b@reads.test")
      keyB = (await createKey(app, cookieB)).key
      await createBrand(app, cookieB, "acme", { brand_name: "Secret B Brand", domain: "secret-b.example" })
      expect((await post(`/api/v1/me/brands/acme/competitors`, { name: "Other", domain: "other-b.example" }, cookieB)).status).toBe(201)
      expect((await post(`/api/v1/me/brands/acme/prompts`, { prompt: "secret b prompt" }, cookieB)).status).toBe(201)

      // Store the fixture through the repository, with the analysis written by hand.
      await app.run(Effect.gen(function*() {
        const brandsRepo = yield* BrandsRepo
        const repo = yield* ObservationsRepo
        const accounts = yield* AccountsRepo
        const accountA = (yield* accounts.findUserByEmail("a@reads.test")).pipe((o) => (o._tag === "Some" ? o.value.accountId : 0))
        const accountB = (yield* accounts.findUserByEmail("b@reads.test")).pipe((o) => (o._tag === "Some" ? o.value.accountId : 0))
        const targets = {
          acme: { accountId: accountA, slug: "acme" },
          bolt: { accountId: accountA, slug: "bolt" },
          "b-acme": { accountId: accountB, slug: "acme" }
        }
        const loaded: Record<string, { brand: { id: number; name: string; domain: string }; entities: Map<string, { id: number | null; domain: string }>; prompts: Map<string, string> }> = {}
        const promptCodes: Record<string, string> = {
          "best crm": "P1",
          "crm pricing": "P2",
          "crm for startups": "P3",
          "fast scooters": "Q1",
          "scooter battery life": "Q2",
          "secret b prompt": "R1"
        }
        for (const [code, target] of Object.entries(targets)) {
          const brand = (yield* brandsRepo.get(target.accountId, target.slug)).pipe((o) => (o._tag === "Some" ? o.value : undefined))!
          const competitors = yield* repo.competitors(target.accountId, brand.id)
          const prompts = yield* repo.prompts(target.accountId, brand.id)
          for (const p of prompts) num[promptCodes[p.prompt]!] = p.num
          loaded[code] = {
            brand,
            entities: new Map<string, { id: number | null; domain: string }>([
              [brand.name === "Secret B Brand" ? "Secret" : brand.name, { id: null, domain: brand.domain }],
              ...competitors.map((c) => [c.name, { id: c.id, domain: c.domain }] as const)
            ]),
            prompts: new Map(prompts.map((p) => [promptCodes[p.prompt]!, p.id]))
          }
        }
        const onDomain = (url: string, domain: string) => {
          const host = domainOf(url)!
          return host === domain || host.endsWith(`.${domain}`)
        }
        const rows: Array<StoredObservation> = FIXTURE.map((spec) => {
          const target = targets[spec.brand]
          const { brand, entities, prompts } = loaded[spec.brand]!
          const citations = spec.citations.map((url, i) => ({ position: i + 1, url, domain: domainOf(url)!, bucket: bucketOf(domainOf(url)!) }))
          const mentions = spec.mentions.map(([name, rank, sentiment]) => {
            const entity = entities.get(name)!
            return {
              competitorId: entity.id,
              entity: name,
              rank,
              sentiment,
              label: label(sentiment),
              snippet: `${spec.id} says ${name}`,
              citedUrl: spec.citations.find((url) => onDomain(url, entity.domain)) ?? null,
              viaCitationOnly: false
            } as const
          })
          const own = mentions.find((m) => m.competitorId === null)
          return {
            accountId: target.accountId,
            brandId: brand.id,
            promptId: prompts.get(spec.prompt)!,
            engine: spec.engine,
            region: spec.region,
            language: spec.language ?? "en",
            observedAt: new Date(spec.at),
            origin: "import",
            response: `answer ${spec.id}`,
            analysis: {
              mentions,
              citations,
              fanouts: (spec.fanouts ?? []).map(([subQuestion, urls], i) => ({
                position: i + 1,
                subQuestion,
                citations: urls.map((url, j) => ({ position: j + 1, url, domain: domainOf(url)!, bucket: bucketOf(domainOf(url)!) }))
              })),
              brandMentioned: own !== undefined,
              brandRank: own?.rank ?? null,
              brandCited: spec.citations.some((url) => onDomain(url, brand.domain)),
              mentionedCompetitors: mentions.filter((m) => m.competitorId !== null).length
            }
          }
        })
        // In two calls, so that the rollups are also added to rows that already exist.
        const first = yield* repo.insert(rows.slice(0, 9))
        const second = yield* repo.insert(rows.slice(9))
        expect(first.inserted + second.inserted).toBe(FIXTURE.length)
      }))
    }, 60_000)
    afterAll(() => app.dispose())

    const get = async (path: string, k = key) => {
      const response = await app.fetch(`/api/public/v1${path}`, { headers: bearer(k) })
      return { status: response.status, body: (await json(response)) as any }
    }
    const ok = async (path: string, k = key) => {
      const { body, status } = await get(path, k)
      if (status !== 200) throw new Error(`${path}: ${status} ${JSON.stringify(body)}`)
      return body
    }

    /**
     * The backfill statements of a migration, run into fresh temp tables, give the rows the write-time rollups hold:
     * each [table, columns, order] compared in that order.
     */
    const expectBackfillEqualsLive = async (file: string, tables: ReadonlyArray<[string, string, string]>) => {
      const migration = await Bun.file(new URL(`../../migrations/${file}`, import.meta.url)).text()
      const backfill = migration.slice(migration.indexOf("-- Backfill"))
      for (const [table] of tables) await app.run(sqlOf(`create temp table ${table}_check (like ${table} including defaults)`))
      await app.run(sqlOf(backfill.replace(/insert into (\w+) /g, "insert into $1_check ")))
      for (const [table, columns, order] of tables) {
        const live = await app.run(sqlOf(`select ${columns} from ${table} order by ${order}`))
        const rebuilt = await app.run(sqlOf(`select ${columns} from ${table}_check order by ${order}`))
        expect(live.length).toBeGreaterThan(0)
        expect(JSON.stringify(live)).toBe(JSON.stringify(rebuilt))
        await app.run(sqlOf(`drop table ${table}_check`))
      }
    }

    it("the write-time rollups equal a recomputation from the raw rows", async () => {
      const tables: Array<[string, string, string]> = [
        ["prompt_daily", "brand_id, day, prompt_id, responses", "brand_id, day, prompt_id"],
        ["prompt_entity_daily", "brand_id, entity_id, day, prompt_id, engines, mentions, rank_sum, with_brand, positive, neutral, negative", "brand_id, entity_id, day, prompt_id"],
        ["domain_daily", "brand_id, day, region, domain, bucket, citations, competitor_observations, brand_observations", "brand_id, day, region, domain"],
        ["domain_entity_daily", "brand_id, entity_id, day, region, domain, bucket, citations, observations", "brand_id, entity_id, day, region, domain"]
      ]
      await expectBackfillEqualsLive("0004_visibility_reads.sql", tables)
    })

    describe("GET /brands/{slug}/snapshots", () => {
      it("7d: one entry per day with observations, every figure (all regions)", async () => {
        // 03-09: A6 (perplexity): Acme rank 3 +.5; Globex +.5, Initech 0; no citation on acme.com.
        // 03-13: A12 (gemini): Acme rank 1, 0 (neutral).
        // 03-14: A4 (chatgpt, Acme 1/-.5), A5 (chatgpt, nothing), A14 (gemini, Acme 1/+.5, Initech +.5, cites acme.com):
        //        3 responses, 2 mentions, 1 cited; chatgpt 1/2, gemini 1/1; sentiment (−.5+.5)/2 = 0, pos 1/2, neg 1/2.
        // 03-15: A1 (chatgpt, Acme 1/+.5, Globex 0, cites acme.com), A2 (perplexity, Globex −.5, Initech +.5),
        //        A3 (gemini, Acme 2/0, Initech −.5, cites blog.acme.com), A13 (chatgpt, nothing):
        //        4 responses, 2 mentions, 2 cited; chatgpt 1/2, perplexity 0/1, gemini 1/1;
        //        sentiment (.5+0)/2 = .25, pos 1/2, neu 1/2; ranks 1 and 2: avg 1.5, top1 1/2, top3 1;
        //        Globex (0 − .5)/2 = −.25, Initech (.5 − .5)/2 = 0.
        // A7 (03-08 23:59:59) is the previous day in UTC; A11 (03-16) is tomorrow: both left out.
        const body = await ok("/brands/acme/snapshots?range=7d")
        expectClose(body, {
          brand_slug: "acme",
          range: "7d",
          count: 4,
          snapshots: [
            {
              date: "2026-03-09", citation_rate: 0, brand_mentions: 1, total_responses: 1, per_engine: { perplexity: 1 },
              sentiment_avg: 0.5, sentiment_pos: 1, sentiment_neu: 0, sentiment_neg: 0,
              ranking: stats(3, 0, 1, 1), ranking_per_engine: { perplexity: stats(3, 0, 1, 1) },
              sentiment_per_competitor: { Globex: 0.5, Initech: 0 }
            },
            {
              date: "2026-03-13", citation_rate: 0, brand_mentions: 1, total_responses: 1, per_engine: { gemini: 1 },
              sentiment_avg: 0, sentiment_pos: 0, sentiment_neu: 1, sentiment_neg: 0,
              ranking: stats(1, 1, 1, 1), ranking_per_engine: { gemini: stats(1, 1, 1, 1) },
              sentiment_per_competitor: {}
            },
            {
              date: "2026-03-14", citation_rate: 1 / 3, brand_mentions: 2, total_responses: 3, per_engine: { chatgpt: 0.5, gemini: 1 },
              sentiment_avg: 0, sentiment_pos: 0.5, sentiment_neu: 0, sentiment_neg: 0.5,
              ranking: stats(1, 1, 1, 2), ranking_per_engine: { chatgpt: stats(1, 1, 1, 1), gemini: stats(1, 1, 1, 1) },
              sentiment_per_competitor: { Initech: 0.5 }
            },
            {
              date: "2026-03-15", citation_rate: 0.5, brand_mentions: 2, total_responses: 4,
              per_engine: { chatgpt: 0.5, perplexity: 0, gemini: 1 },
              sentiment_avg: 0.25, sentiment_pos: 0.5, sentiment_neu: 0.5, sentiment_neg: 0,
              ranking: stats(1.5, 0.5, 1, 2),
              ranking_per_engine: { chatgpt: stats(1, 1, 1, 1), perplexity: ZERO, gemini: stats(2, 0, 1, 1) },
              sentiment_per_competitor: { Globex: -0.25, Initech: 0 }
            }
          ]
        })
      })

      it("default range 30d adds 03-05 and 03-08; an empty brand gives no snapshots", async () => {
        const body = await ok("/brands/acme/snapshots")
        expect(body.range).toBe("30d")
        // 03-05 (A8), 03-08 (A7), 03-09, 03-13, 03-14, 03-15.
        expect(body.snapshots.map((s: any) => s.date)).toEqual(["2026-03-05", "2026-03-08", "2026-03-09", "2026-03-13", "2026-03-14", "2026-03-15"])
        // 03-08: A7 alone, Globex only: 0 mentions of the brand, sentiment figures 0, ranking zeros.
        expectClose(body.snapshots[1], {
          date: "2026-03-08", citation_rate: 0, brand_mentions: 0, total_responses: 1, per_engine: { perplexity: 0 },
          sentiment_avg: 0, sentiment_pos: 0, sentiment_neu: 0, sentiment_neg: 0,
          ranking: ZERO, ranking_per_engine: { perplexity: ZERO }, sentiment_per_competitor: { Globex: 0.5 }
        })
        // 90d adds A9 (02-03) but not A10 (2025-12-05, before 2025-12-16).
        expect((await ok("/brands/acme/snapshots?range=90d")).snapshots[0].date).toBe("2026-02-03")
        const bolt = await ok("/brands/bolt/snapshots?range=7d")
        expect(bolt.count).toBe(3) // 03-12, 03-14, 03-15
      })
    })

    describe("GET /brands/{slug}/mentions", () => {
      const row = (id: string, engine: string, prompt: string, rank: number, sentiment: string, cited: string | null, seen: string) => ({
        engine, prompt, response_snippet: `${id} says Acme`, rank, sentiment, cited_url: cited, seen_at: seen
      })
      const strip = (mentions: Array<any>) => mentions.map(({ id, ...rest }) => (expect(typeof id).toBe("string"), rest))

      it("defaults: the primary region and its language, last 30 days, newest first", async () => {
        // US/en brand mentions in 02-14..03-15: A1, A14, A4, A6, A8 (A3 and A12 are GB; A10 too old; A11 tomorrow).
        const body = await ok("/brands/acme/mentions")
        expect(body.brand_slug).toBe("acme")
        expect(body.region).toBe("US")
        expect(body.language).toBe("en")
        expect(body.count).toBe(5)
        expect(strip(body.mentions)).toEqual([
          row("A1", "chatgpt", "best crm", 1, "positive", "https://acme.com/a", "2026-03-15T08:00:00.000Z"),
          row("A14", "gemini", "crm pricing", 1, "positive", "https://acme.com/c", "2026-03-14T09:00:00.000Z"),
          row("A4", "chatgpt", "best crm", 1, "negative", null, "2026-03-14T08:00:00.000Z"),
          row("A6", "perplexity", "crm pricing", 3, "positive", null, "2026-03-09T00:00:00.000Z"),
          row("A8", "chatgpt", "best crm", 1, "positive", "https://acme.com/b", "2026-03-05T12:00:00.000Z")
        ])
      })

      it("sentiment filter pos/neu/neg, empty = all", async () => {
        expect((await ok("/brands/acme/mentions?sentiment=neg")).mentions.map((m: any) => m.seen_at)).toEqual(["2026-03-14T08:00:00.000Z"])
        expect((await ok("/brands/acme/mentions?sentiment=pos")).count).toBe(4)
        expect((await ok("/brands/acme/mentions?sentiment=neu")).count).toBe(0)
        expect((await ok("/brands/acme/mentions?sentiment=")).count).toBe(5)
      })

      it("region alone takes that region's language; region and language override", async () => {
        // GB -> en (A3; A12 is fr).
        const gb = await ok("/brands/acme/mentions?region=gb")
        expect([gb.region, gb.language, gb.count]).toEqual(["GB", "en", 1])
        expect(strip(gb.mentions)).toEqual([
          row("A3", "gemini", "crm pricing", 2, "neutral", "https://blog.acme.com/x", "2026-03-15T10:00:00.000Z")
        ])
        const fr = await ok("/brands/acme/mentions?region=GB&language=FR")
        expect([fr.region, fr.language, fr.count, fr.mentions[0].cited_url]).toEqual(["GB", "fr", 1, null])
        // FR alone -> fr: no observation in region FR.
        expect(await ok("/brands/acme/mentions?region=FR")).toMatchObject({ region: "FR", language: "fr", count: 0, mentions: [] })
        // The brand's own primary region keeps its primary language: bolt is GB/en.
        expect(await ok("/brands/bolt/mentions")).toMatchObject({ region: "GB", language: "en", count: 2 })
      })
    })

    it("GET /brands/{slug}/prompts: the brand's prompts, used_total over the account, the plan's limit", async () => {
      const body = await ok("/brands/acme/prompts")
      expect(body.prompts.map((p: any) => [p.prompt, p.topic, p.intent, p.source, p.source_query])).toEqual([
        ["best crm", "crm", "informational", "manual", ""],
        ["crm pricing", "pricing", "informational", "manual", ""],
        ["crm for startups", "crm", "informational", "manual", ""]
      ])
      expect(body.count).toBe(3)
      expect(body.used_total).toBe(5) // 3 of acme + 2 of bolt (not B's)
      expect(body.limit).toBe(250) // growth
    })

    describe("GET /portfolio", () => {
      it("30d: score, delta_7d, top engine and competitor of every brand", async () => {
        // acme 30d: 11 observations (A1 A2 A3 A13 A4 A5 A14 A12 A6 A7 A8), 7 mention Acme -> 63.636 -> 63.6.
        //   last 7 days: 9 observations, 6 mentions -> 66.7; the 7 before (03-02..03-08): A7, A8, 1 mention -> 50.0;
        //   delta 16.7. Engines: chatgpt 3/5, perplexity 1/3, gemini 3/3 -> gemini. Globex 5 mentions, Initech 4.
        // bolt 30d: B1 B5 B4 B2 B3, 3 mention Bolt -> 60.0; last 7: 2/4 -> 50.0; before: none -> 0; delta 50.
        //   Engines: chatgpt 2/3, gemini 0/1, perplexity 1/1 -> perplexity. Zenith 3.
        expectClose(await ok("/portfolio"), {
          brands: [
            { slug: "acme", name: "Acme", ai_presence_score: 63.6, delta_7d: 16.7, top_engine: "gemini", top_competitor: "Globex" },
            { slug: "bolt", name: "Bolt", ai_presence_score: 60, delta_7d: 50, top_engine: "perplexity", top_competitor: "Zenith" }
          ],
          range: "30d",
          region: "all"
        })
      })

      it("7d: acme's top competitor is Initech (4 against Globex's 3); bolt's top engine chatgpt", async () => {
        // acme 7d: chatgpt 2/4, perplexity 1/2, gemini 3/3; Globex A1 A2 A6 = 3, Initech A2 A3 A6 A14 = 4.
        // bolt 7d: 2/4 -> 50.0; chatgpt 2/3, gemini 0/1.
        expectClose((await ok("/portfolio?range=7d")).brands, [
          { slug: "acme", name: "Acme", ai_presence_score: 66.7, delta_7d: 16.7, top_engine: "gemini", top_competitor: "Initech" },
          { slug: "bolt", name: "Bolt", ai_presence_score: 50, delta_7d: 50, top_engine: "chatgpt", top_competitor: "Zenith" }
        ])
      })
    })

    describe("GET /citations", () => {
      it("30d: answer citations of every brand of the workspace, by domain", async () => {
        // reddit.com A1 A13 A6 A6 B1 = 5; acme.com A1 A14 A8 = 3; news.example.org A5 A7 = 2; zenith.com B2 B4 = 2;
        // one each: blog.acme.com, bolt.io, en.wikipedia.org, g2.com (www. dropped), globex.com, initech.com, lemonde.fr.
        // Total 19. Fan-out citations (g2.com/list, capterra.com, reddit.com/r/p, zenith.com/r) are not counted.
        const d = (domain: string, citations: number, bucket: string) => ({ domain, citations, share: citations / 19, bucket })
        expectClose(await ok("/citations"), {
          domains: [
            d("reddit.com", 5, "ugc"),
            d("acme.com", 3, "owned"),
            d("news.example.org", 2, "earned"),
            d("zenith.com", 2, "competitor"),
            d("blog.acme.com", 1, "owned"),
            d("bolt.io", 1, "owned"),
            d("en.wikipedia.org", 1, "reference"),
            d("g2.com", 1, "earned"),
            d("globex.com", 1, "competitor"),
            d("initech.com", 1, "competitor"),
            d("lemonde.fr", 1, "earned")
          ],
          total_citations: 19,
          range: "30d"
        })
      })

      it("7d leaves out A7 (03-08) and A8 (03-05): 17", async () => {
        const body = await ok("/citations?range=7d")
        expect(body.total_citations).toBe(17)
        expect(body.domains.slice(0, 3).map((d: any) => [d.domain, d.citations])).toEqual([["reddit.com", 5], ["acme.com", 2], ["zenith.com", 2]])
      })
    })

    describe("GET /citations/fanouts", () => {
      it("30d: one group per prompt and engine with its latest decomposition; 3 groups = the cap, not truncated", async () => {
        // acme P1/perplexity: A2 (03-15); acme P2/perplexity: A6 (03-09), newer than A7 (03-08); bolt Q1/chatgpt: B1.
        // Order: brands oldest first, prompts oldest first, engines alphabetical. Index = position from 1.
        expectClose(await ok("/citations/fanouts"), {
          range_days: 30,
          truncated_groups: false,
          prompts: [
            {
              prompt_id: num.P1, prompt_text: "best crm", brand_slug: "acme", brand_name: "Acme", engine: "perplexity", snapshot_date: "2026-03-15",
              fanouts: [
                { index: 1, sub_question: "crm list", citations: ["https://g2.com/list"] },
                { index: 2, sub_question: "crm prices", citations: [] }
              ]
            },
            {
              prompt_id: num.P2, prompt_text: "crm pricing", brand_slug: "acme", brand_name: "Acme", engine: "perplexity", snapshot_date: "2026-03-09",
              fanouts: [{ index: 1, sub_question: "pricing tiers", citations: ["https://capterra.com/a", "https://reddit.com/r/p"] }]
            },
            {
              prompt_id: num.Q1, prompt_text: "fast scooters", brand_slug: "bolt", brand_name: "Bolt", engine: "chatgpt", snapshot_date: "2026-03-15",
              fanouts: [{ index: 1, sub_question: "scooter range", citations: ["https://zenith.com/r"] }]
            }
          ]
        })
      })

      it("90d: 4 groups (A9's P3/gemini added) over the cap of 3: truncated_groups", async () => {
        const body = await ok("/citations/fanouts?range=90d")
        expect(body.range_days).toBe(90)
        expect(body.truncated_groups).toBe(true)
        expect(body.prompts.map((g: any) => [g.prompt_text, g.engine, g.snapshot_date])).toEqual([
          ["best crm", "perplexity", "2026-03-15"],
          ["crm pricing", "perplexity", "2026-03-09"],
          ["crm for startups", "gemini", "2026-02-03"]
        ])
      })

      it("7d: P2/perplexity still shows A6 (03-09 00:00 is inside), not A7", async () => {
        const body = await ok("/citations/fanouts?range=7d")
        expect(body.prompts.map((g: any) => g.snapshot_date)).toEqual(["2026-03-15", "2026-03-09", "2026-03-15"])
        expect(body.truncated_groups).toBe(false)
        expect(VISIBILITY_DEFAULTS.fanoutGroupCap).toBe(200)
      })
    })

    describe("GET /model", () => {
      it("defaults to the newest brand (bolt), 30d; previous period empty: delta = score", async () => {
        // bolt 30d: chatgpt 2/3 (B1 yes, B5 no, B4 yes), perplexity 1/1 (B3), gemini 0/1 (B2). Nothing before 02-14.
        expectClose(await ok("/model"), {
          engines: [
            { engine: "perplexity", score: 100, delta: 100 },
            { engine: "chatgpt", score: 200 / 3, delta: 200 / 3 },
            { engine: "gemini", score: 0, delta: 0 }
          ],
          range: "30d"
        })
      })

      it("brand=acme, 7d against 03-02..03-08", async () => {
        // now: chatgpt A1 y, A13 n, A4 y, A5 n = 50; perplexity A2 n, A6 y = 50; gemini A3 A14 A12 = 100.
        // before: chatgpt A8 y = 100; perplexity A7 n = 0; gemini none = 0. Ties (50) alphabetical.
        expectClose(await ok("/model?brand=acme&range=7d"), {
          engines: [
            { engine: "gemini", score: 100, delta: 100 },
            { engine: "chatgpt", score: 50, delta: -50 },
            { engine: "perplexity", score: 50, delta: 50 }
          ],
          range: "7d"
        })
      })
    })

    it("GET /topics: themes with counts and tiers, distinct keywords", async () => {
      // crm 2 (P1, P3), mobility 2 (Q1, Q2), pricing 1 (P2). Tier = 1 + floor(3 r / 3), r = themes with a higher count:
      // crm 0 -> 1, mobility 0 -> 1, pricing 2 -> 3. Keywords: best crm pricing startups fast scooters scooter battery
      // life = 9 ("for" is a stop word).
      expect(await ok("/topics")).toEqual({
        themes: [
          { theme: "crm", count: 2, tier: 1 },
          { theme: "mobility", count: 2, tier: 1 },
          { theme: "pricing", count: 1, tier: 3 }
        ],
        total_keywords: 9
      })
    })

    describe("GET /industry/metrics", () => {
      it("defaults to the primary brand (acme), its region and language (US/en), all engines, 30d", async () => {
        // US/en observations 02-14..03-15: A1 A2 A13 A4 A14 A6 A7 A8 = 8.
        // Acme A1 A4 A14 A6 A8 = 5 (ranks 1+1+1+3+1 = 7 -> 1.4; pos 4, neg 1 (A4));
        // Globex A1 A2 A6 A7 A8 = 5 (neu A1, neg A2 A8, pos A6 A7); Initech A2 A14 A6 = 3 (pos A2 A14, neu A6). Sum 13.
        // Previous period (01-15..02-13): A9, Globex only: shares 0 / 1 / 0.
        // Ties of mentions (Acme 5, Globex 5) alphabetical.
        const body = await ok("/industry/metrics")
        const { methodology, ...rest } = body
        expect(Object.keys(methodology).length).toBeGreaterThan(0)
        for (const value of Object.values(methodology)) expect(typeof value).toBe("string")
        expectClose(rest, {
          brand_slug: "acme",
          brand_name: "Acme",
          range: "30d",
          from: "2026-02-14",
          to: "2026-03-15",
          engine: "all",
          region: "US",
          language: "en",
          last_refreshed: "2026-03-15T11:00:00.000Z", // A13, the newest US/en observation of the range
          ranking: [
            { name: "Acme", mentions: 5, share: 5 / 13, delta: 5 / 13, is_own: true, is_pinned: false, domain: "acme.com", sentiment: { pos: 0.8, neu: 0, neg: 0.2 } },
            { name: "Globex", mentions: 5, share: 5 / 13, delta: 5 / 13 - 1, is_own: false, is_pinned: true, domain: "globex.com", sentiment: { pos: 0.4, neu: 0.2, neg: 0.4 } },
            { name: "Initech", mentions: 3, share: 3 / 13, delta: 3 / 13, is_own: false, is_pinned: false, domain: "initech.com", sentiment: { pos: 2 / 3, neu: 1 / 3, neg: 0 } }
          ],
          ranking_count: 3,
          time_series: [
            { date: "2026-03-05", brand_mentions: 1, total_responses: 1, per_competitor: { Globex: 1, Initech: 0 } },
            { date: "2026-03-08", brand_mentions: 0, total_responses: 1, per_competitor: { Globex: 1, Initech: 0 } },
            { date: "2026-03-09", brand_mentions: 1, total_responses: 1, per_competitor: { Globex: 1, Initech: 1 } },
            { date: "2026-03-14", brand_mentions: 2, total_responses: 2, per_competitor: { Globex: 0, Initech: 1 } },
            { date: "2026-03-15", brand_mentions: 1, total_responses: 3, per_competitor: { Globex: 2, Initech: 1 } }
          ],
          time_series_count: 5,
          own: { total_mentions: 5, total_responses: 8, avg_position: 1.4 },
          tracked_competitors: ["Globex", "Initech"]
        })
      })

      it("engine=chatgpt is an exact filter", async () => {
        // chatgpt US/en: A1 A13 A4 A8 = 4; Acme A1 A4 A8 = 3 (all rank 1); Globex A1 A8 = 2; Initech 0. Sum 5.
        // Previous period on chatgpt: nothing, so delta = share.
        const body = await ok("/industry/metrics?engine=chatgpt")
        expect(body.engine).toBe("chatgpt")
        expectClose(body.own, { total_mentions: 3, total_responses: 4, avg_position: 1 })
        expectClose(body.ranking.map((r: any) => [r.name, r.mentions, r.share, r.delta]), [
          ["Acme", 3, 0.6, 0.6],
          ["Globex", 2, 0.4, 0.4],
          ["Initech", 0, 0, 0]
        ])
        expectClose(body.ranking[2].sentiment, { pos: 0, neu: 0, neg: 0 })
        expectClose(body.time_series, [
          { date: "2026-03-05", brand_mentions: 1, total_responses: 1, per_competitor: { Globex: 1, Initech: 0 } },
          { date: "2026-03-14", brand_mentions: 1, total_responses: 1, per_competitor: { Globex: 0, Initech: 0 } },
          { date: "2026-03-15", brand_mentions: 1, total_responses: 2, per_competitor: { Globex: 1, Initech: 0 } }
        ])
        expect(body.last_refreshed).toBe("2026-03-15T11:00:00.000Z")
      })

      it("an unknown engine (a display name, a vendor) gives an empty result, not an error", async () => {
        for (const engine of ["ChatGPT", "openai", "chat"]) {
          const body = await ok(`/industry/metrics?engine=${engine}`)
          expectClose(
            { ...body, methodology: {} },
            {
              brand_slug: "acme", brand_name: "Acme", range: "30d", from: "2026-02-14", to: "2026-03-15", engine, region: "US", language: "en",
              last_refreshed: NOW.toISOString() /* acme was added at NOW */, ranking: [], ranking_count: 0, time_series: [], time_series_count: 0,
              own: { total_mentions: 0, total_responses: 0, avg_position: 0 }, tracked_competitors: ["Globex", "Initech"], methodology: {}
            }
          )
        }
      })

      it("brand=bolt reads bolt in its primary region GB", async () => {
        // bolt GB/en 30d: B1 B5 B4 B2 = 4; Bolt B1 (1, pos) B4 (2, neu) = 2; Zenith B1 (neu) B4 (pos) B2 (neg) = 3.
        const body = await ok("/industry/metrics?brand=bolt")
        expect([body.brand_slug, body.region, body.language, body.tracked_competitors]).toEqual(["bolt", "GB", "en", ["Zenith"]])
        expectClose(body.own, { total_mentions: 2, total_responses: 4, avg_position: 1.5 })
        expectClose(body.ranking.map((r: any) => [r.name, r.mentions, r.share, r.delta, r.is_own, r.sentiment]), [
          ["Zenith", 3, 0.6, 0.6, false, { pos: 1 / 3, neu: 1 / 3, neg: 1 / 3 }],
          ["Bolt", 2, 0.4, 0.4, true, { pos: 0.5, neu: 0.5, neg: 0 }]
        ])
      })

      it("region=GB for acme: A3 and A5 (en; A12 is fr)", async () => {
        const body = await ok("/industry/metrics?region=GB")
        expect([body.region, body.language]).toEqual(["GB", "en"])
        expectClose(body.own, { total_mentions: 1, total_responses: 2, avg_position: 2 })
        expect(body.ranking.map((r: any) => [r.name, r.mentions])).toEqual([["Acme", 1], ["Initech", 1], ["Globex", 0]])
      })
    })

    describe("GET /industry/ranking", () => {
      it("no topic: the primary brand, every region and engine, 30d", async () => {
        // 11 observations; Acme A1 A3 A4 A14 A12 A6 A8 = 7 (pos A1 A14 A6 A8, neu A3 A12, neg A4);
        // Globex 5 (neu A1, neg A2 A8, pos A6 A7); Initech A2 A3 A6 A14 = 4 (pos A2 A14, neg A3, neu A6). Sum 16.
        // Previous: Globex 1 of 1.
        expectClose(await ok("/industry/ranking"), {
          brand_slug: "acme",
          brand_name: "Acme",
          range: "30d",
          topic: null,
          engine: "all",
          region: "all",
          total_responses: 11,
          ranking: [
            { name: "Acme", mentions: 7, share: 7 / 16, delta: 7 / 16, is_own: true, is_pinned: false, domain: "acme.com", sentiment: { pos: 4 / 7, neu: 2 / 7, neg: 1 / 7 } },
            { name: "Globex", mentions: 5, share: 5 / 16, delta: 5 / 16 - 1, is_own: false, is_pinned: true, domain: "globex.com", sentiment: { pos: 0.4, neu: 0.2, neg: 0.4 } },
            { name: "Initech", mentions: 4, share: 0.25, delta: 0.25, is_own: false, is_pinned: false, domain: "initech.com", sentiment: { pos: 0.5, neu: 0.25, neg: 0.25 } }
          ],
          ranking_count: 3
        })
      })

      it("topic=crm: the observations of P1 and P3", async () => {
        // A1 A2 A4 A5 A8 A13 A12 = 7; Acme A1 A4 A8 A12 = 4; Globex A1 A2 A8 = 3; Initech A2 = 1. Sum 8.
        // Previous: A9 (P3), Globex 1 of 1.
        const body = await ok("/industry/ranking?topic=crm")
        expect([body.topic, body.total_responses, body.ranking_count]).toEqual(["crm", 7, 3])
        expectClose(body.ranking.map((r: any) => [r.name, r.mentions, r.share, r.delta]), [
          ["Acme", 4, 0.5, 0.5],
          ["Globex", 3, 3 / 8, 3 / 8 - 1],
          ["Initech", 1, 1 / 8, 1 / 8]
        ])
        expectClose(body.ranking[0].sentiment, { pos: 0.5, neu: 0.25, neg: 0.25 }) // A1 A8 pos, A12 neu, A4 neg
      })

      it("topic=pricing: ties alphabetical; an unknown topic is empty", async () => {
        // A3 A14 A6 A7 = 4; Acme A3 A14 A6 = 3; Initech A3 A14 A6 = 3; Globex A6 A7 = 2.
        const body = await ok("/industry/ranking?topic=pricing")
        expect(body.total_responses).toBe(4)
        expectClose(body.ranking.map((r: any) => [r.name, r.mentions, r.share]), [["Acme", 3, 3 / 8], ["Initech", 3, 3 / 8], ["Globex", 2, 0.25]])
        expect(await ok("/industry/ranking?topic=nothing")).toMatchObject({ topic: "nothing", total_responses: 0, ranking: [], ranking_count: 0 })
      })
    })

    describe("GET /industry/competitors/{name}/citations and /prompts", () => {
      it("citations: domains cited in the primary brand's observations mentioning the competitor", async () => {
        // Globex 30d: A1 (acme.com, reddit.com), A2 (globex.com, g2.com), A6 (reddit.com x2), A7 (news.example.org),
        // A8 (acme.com): reddit 3, acme.com 2, g2 1, globex 1, news 1 = 8.
        const d = (domain: string, citations: number, bucket: string) => ({ domain, citations, share: citations / 8, bucket })
        const expected = {
          competitor: "Globex",
          range: "30d",
          domains: [d("reddit.com", 3, "ugc"), d("acme.com", 2, "owned"), d("g2.com", 1, "earned"), d("globex.com", 1, "competitor"), d("news.example.org", 1, "earned")],
          total_citations: 8
        }
        expectClose(await ok("/industry/competitors/Globex/citations"), expected)
        expectClose(await ok("/industry/competitors/globex/citations"), expected) // case-insensitive
        // Initech 7d: A2 (globex.com, g2.com), A3 (wikipedia, blog.acme.com), A6 (reddit x2), A14 (initech.com, acme.com).
        const initech = await ok("/industry/competitors/INITECH/citations?range=7d")
        expect(initech.total_citations).toBe(8)
        expect(initech.domains.map((x: any) => [x.domain, x.citations])).toEqual([
          ["reddit.com", 2], ["acme.com", 1], ["blog.acme.com", 1], ["en.wikipedia.org", 1], ["g2.com", 1], ["globex.com", 1], ["initech.com", 1]
        ])
      })

      it("prompts: per prompt, appearances, engines, mean rank, co-mentions of the brand", async () => {
        // Globex 30d: P1: A1 (chatgpt, 2, brand), A2 (perplexity, 1), A8 (chatgpt, 2, brand) -> 3, rank 5/3, 2;
        //             P2: A6 (perplexity, 1, brand), A7 (perplexity, 1) -> 2, rank 1, 1.
        expectClose(await ok("/industry/competitors/Globex/prompts"), {
          competitor: "Globex",
          range: "30d",
          prompts: [
            { prompt_id: num.P1, prompt: "best crm", topic: "crm", appearances: 3, engines: ["chatgpt", "perplexity"], avg_rank: 5 / 3, brand_mentioned: 2 },
            { prompt_id: num.P2, prompt: "crm pricing", topic: "pricing", appearances: 2, engines: ["perplexity"], avg_rank: 1, brand_mentioned: 1 }
          ],
          count: 2
        })
        // 90d adds A9 (P3, gemini, rank 1, no brand).
        const body = await ok("/industry/competitors/Globex/prompts?range=90d")
        expectClose(body.prompts[2], { prompt_id: num.P3, prompt: "crm for startups", topic: "crm", appearances: 1, engines: ["gemini"], avg_rank: 1, brand_mentioned: 0 })
      })

      it("404 competitor not found: unknown, or a competitor of another brand than the primary one", async () => {
        for (const name of ["Nope", "Zenith", "Other"]) {
          for (const what of ["citations", "prompts"]) {
            const { body, status } = await get(`/industry/competitors/${name}/${what}`)
            expect(status).toBe(404)
            expect(body).toEqual({ error: "competitor not found" })
          }
        }
      })
    })

    describe("GET /industry/gap", () => {
      it("30d, all regions: domains with competitors and never with the brand", async () => {
        // globex.com and g2.com: A2 (Globex, Initech; no Acme) -> 1 each, 2 competitors; news.example.org: A7 (Globex) -> 1.
        // Excluded: acme.com, reddit.com, en.wikipedia.org, blog.acme.com, initech.com, lemonde.fr (cited with Acme).
        expect(await ok("/industry/gap")).toEqual({
          range: "30d",
          region: "all",
          domains: [
            { domain: "g2.com", bucket: "earned", opportunity: 1, competitors: ["Globex", "Initech"] },
            { domain: "globex.com", bucket: "competitor", opportunity: 1, competitors: ["Globex", "Initech"] },
            { domain: "news.example.org", bucket: "earned", opportunity: 1, competitors: ["Globex"] }
          ],
          count: 3
        })
      })

      it("90d adds forum.globex-fans.net (A9); region filter is case-insensitive; empty = all", async () => {
        const body = await ok("/industry/gap?range=90d")
        expect(body.domains.map((d: any) => d.domain)).toEqual(["g2.com", "globex.com", "forum.globex-fans.net", "news.example.org"])
        // GB: A3 (with Acme), A5 (no entity), A12 (Acme only): nothing.
        expect(await ok("/industry/gap?region=gb")).toEqual({ range: "30d", region: "GB", domains: [], count: 0 })
        expect((await ok("/industry/gap?region=us")).count).toBe(3)
        expect((await ok("/industry/gap?region=")).region).toBe("all")
      })
    })

    describe("brand and topic selectors of the gap, the ranking and the citations", () => {
      it("/industry/gap?topic= reads only the answers to the brand's prompts of that topic", async () => {
        // crm (P1, P3): A2 cites g2.com and globex.com beside Globex and Initech; A5 (no entity) does not count.
        expect(await ok("/industry/gap?topic=crm")).toEqual({
          range: "30d",
          region: "all",
          domains: [
            { domain: "g2.com", bucket: "earned", opportunity: 1, competitors: ["Globex", "Initech"] },
            { domain: "globex.com", bucket: "competitor", opportunity: 1, competitors: ["Globex", "Initech"] }
          ],
          count: 2
        })
        // pricing (P2): A7 cites news.example.org beside Globex; A3, A6 and A14 cite theirs beside Acme.
        expect(await ok("/industry/gap?topic=pricing")).toEqual({
          range: "30d",
          region: "all",
          domains: [{ domain: "news.example.org", bucket: "earned", opportunity: 1, competitors: ["Globex"] }],
          count: 1
        })
        expect((await ok("/industry/gap?topic=pricing&region=gb")).domains).toEqual([])
        expect((await ok("/industry/gap?topic=crm&range=90d")).domains.map((d: any) => d.domain)).toEqual(["g2.com", "globex.com", "forum.globex-fans.net"])
        // A topic no prompt has (or another brand's): nothing; an empty topic is no filter.
        expect((await ok("/industry/gap?topic=mobility")).domains).toEqual([])
        expect(await ok("/industry/gap?topic=")).toEqual(await ok("/industry/gap"))
      })

      it("brand= selects the brand of the gap and the ranking (default the primary brand)", async () => {
        expect(await ok("/industry/gap?brand=acme")).toEqual(await ok("/industry/gap"))
        // bolt: zenith.com is cited beside Bolt (B4), so it is no gap; nothing of acme's shows.
        expect(await ok("/industry/gap?brand=bolt")).toEqual({ range: "30d", region: "all", domains: [], count: 0 })
        expect((await ok("/industry/gap?brand=bolt&topic=mobility&range=90d")).domains).toEqual([])
        const bolt = await ok("/industry/ranking?brand=bolt")
        expect([bolt.brand_slug, bolt.brand_name]).toEqual(["bolt", "Bolt"])
        expect(bolt.ranking.map((r: any) => [r.name, r.mentions, r.is_own])).toEqual([["Bolt", 3, true], ["Zenith", 3, false]])
        expect(bolt.total_responses).toBe(5)
        expect((await ok("/industry/ranking?brand=bolt&topic=mobility")).ranking).toEqual(bolt.ranking)
        expect((await ok("/industry/ranking?brand=bolt&topic=crm")).total_responses).toBe(0)
        expect(await ok("/industry/ranking?brand=acme&topic=crm")).toEqual(await ok("/industry/ranking?topic=crm"))
      })

      it("/citations?brand= counts only that brand's answers, buckets relative to it", async () => {
        expect(await ok("/citations?brand=bolt")).toEqual({
          domains: [
            { domain: "zenith.com", citations: 2, share: 0.5, bucket: "competitor" },
            { domain: "bolt.io", citations: 1, share: 0.25, bucket: "owned" },
            { domain: "reddit.com", citations: 1, share: 0.25, bucket: "ugc" }
          ],
          total_citations: 4,
          range: "30d"
        })
        const acme = await ok("/citations?brand=acme")
        expect(acme.domains.map((d: any) => d.domain)).not.toContain("bolt.io")
        expect(acme.domains.map((d: any) => d.domain)).not.toContain("zenith.com")
        const all = await ok("/citations")
        expect(all.total_citations).toBe(acme.total_citations + 4)
      })

      it("an unknown brand is 404 brand not found; a malformed one 400", async () => {
        for (const path of ["/industry/gap?brand=nope", "/industry/ranking?brand=nope", "/citations?brand=nope"]) {
          expect({ path, ...(await get(path)) }).toEqual({ path, status: 404, body: { error: "brand not found" } })
        }
        for (const path of ["/industry/gap?brand=Not_A_Slug", "/industry/ranking?brand=ACME", "/citations?brand=x%20y"]) {
          const { body, status } = await get(path)
          expect({ path, status }).toEqual({ path, status: 400 })
          expect(body.error).toStartWith("invalid brand:")
        }
      })
    })

    describe("engine and region of the ranking; the topic gap from the prompt rollups; a brand's competitor reads", () => {
      it("the rollups of migrations/0025 equal a recomputation from the raw rows", async () => {
        const tables: Array<[string, string, string]> = [
          ["prompt_domain_daily", "brand_id, day, region, prompt_id, domain, bucket, competitor_observations, brand_observations", "brand_id, day, prompt_id, region, domain"],
          ["prompt_domain_entity_daily", "brand_id, entity_id, day, region, prompt_id, domain, observations", "brand_id, day, prompt_id, region, domain, entity_id"],
          ["prompt_scope_daily", "brand_id, day, prompt_id, engine, region, responses, entity_mentions, entity_mentions_sq, entity_observations", "brand_id, day, prompt_id, engine, region"],
          [
            "prompt_entity_scope_daily",
            "brand_id, entity_id, day, prompt_id, engine, region, mentions, co_mentions, rank_sum, positive, neutral, negative",
            "brand_id, day, prompt_id, engine, region, entity_id"
          ]
        ]
        await expectBackfillEqualsLive("0025_prompt_domain_rollups.sql", tables)
      })

      it("the topic gap from the prompt rollups equals the computation from the raw rows", async () => {
        // The definition (docs/metrics.md, gap) over the stored answers, citations and mentions of one topic.
        const raw = async (brand: string, topic: string, region: string | null, range: "7d" | "30d" | "90d") => {
          const { from, to } = periodOf(NOW, range === "7d" ? 7 : range === "30d" ? 30 : 90)
          const regionSql = region === null ? "" : `and o.region = '${region}'`
          const rows = await app.run(sqlOf(`
            with answers as (
              select o.id, o.brand_mentioned, o.mentioned_competitors > 0 as with_competitor
              from observations o join brands b on b.id = o.brand_id and b.slug = '${brand}' and b.account_id = o.account_id
              join prompts p on p.id = o.prompt_id and p.topic = '${topic}'
              where o.account_id = (select account_id from users where email = 'a@reads.test')
                and o.day between '${from}' and '${to}' ${regionSql}
            ),
            cited as (
              select distinct c.domain, c.observation_id, a.brand_mentioned, a.with_competitor
              from citations c join answers a on a.id = c.observation_id
            )
            select domain,
                   (count(*) filter (where with_competitor))::int as opportunity,
                   coalesce((select array_agg(distinct comp.name order by comp.name) from cited c2
                             join mentions m on m.observation_id = c2.observation_id and m.competitor_id is not null
                             join competitors comp on comp.id = m.competitor_id
                             where c2.domain = cited.domain and c2.with_competitor), '{}') as competitors
            from cited group by domain
            having count(*) filter (where brand_mentioned) = 0 and count(*) filter (where with_competitor) > 0`))
          return rows
            .map((r) => ({ domain: String(r["domain"]), opportunity: Number(r["opportunity"]), competitors: [...(r["competitors"] as Array<string>)] }))
            .sort((a, b) => b.opportunity - a.opportunity || b.competitors.length - a.competitors.length || (a.domain < b.domain ? -1 : 1))
        }
        let compared = 0
        for (const [brand, topic] of [["acme", "crm"], ["acme", "pricing"], ["bolt", "mobility"]] as const) {
          for (const region of [null, "US", "GB"]) {
            for (const range of ["7d", "30d", "90d"] as const) {
              const query = `/industry/gap?brand=${brand}&topic=${topic}&range=${range}${region === null ? "" : `&region=${region}`}`
              const body = await ok(query)
              const expected = await raw(brand, topic, region, range)
              expect({ query, domains: body.domains.map((d: any) => ({ domain: d.domain, opportunity: d.opportunity, competitors: d.competitors })) })
                .toEqual({ query, domains: expected })
              compared += expected.length
            }
          }
        }
        expect(compared).toBeGreaterThan(5)
      })

      it("/industry/ranking?engine=&region= reads that engine and region (every language), as /industry/metrics does", async () => {
        // US is all en: the ranking of US and chatgpt is the metrics' of US/en and chatgpt.
        const ranking = await ok("/industry/ranking?engine=chatgpt&region=us")
        expect([ranking.engine, ranking.region]).toEqual(["chatgpt", "US"])
        const metrics = await ok("/industry/metrics?engine=chatgpt&region=US")
        expect(ranking.ranking).toEqual(metrics.ranking)
        expect(ranking.total_responses).toBe(metrics.own.total_responses)
        // GB holds A3 (en) and A5 (en) and A12 (fr) in 30d: the ranking counts all three, metrics of GB/en two.
        expect((await ok("/industry/ranking?region=GB")).total_responses).toBe(3)
        expect((await ok("/industry/metrics?region=GB")).own.total_responses).toBe(2)
        expect(await ok("/industry/ranking?engine=&region=")).toEqual(await ok("/industry/ranking"))
        expect(await ok("/industry/ranking?engine=nope")).toMatchObject({ engine: "nope", total_responses: 0, ranking: [] })
        expect((await get("/industry/ranking?region=USA")).status).toBe(400)
      })

      it("/industry/ranking?topic=&engine= reads the topic's answers on that engine", async () => {
        // crm (P1, P3), chatgpt, 7d: A1 (Acme +.5, Globex 0), A13 (-), A4 (Acme -.5), A5 (-, GB) = 4 answers;
        // Acme 2, Globex 1, Initech 0 (sum 3). Previous 03-02..03-08: A8 (Acme, Globex) = 1 answer, Acme 1/2, Globex 1/2.
        const body = await ok("/industry/ranking?topic=crm&engine=chatgpt&range=7d")
        expect([body.topic, body.engine, body.region, body.total_responses]).toEqual(["crm", "chatgpt", "all", 4])
        expectClose(body.ranking.map((r: any) => [r.name, r.mentions, r.share, r.delta]), [
          ["Acme", 2, 2 / 3, 2 / 3 - 0.5],
          ["Globex", 1, 1 / 3, 1 / 3 - 0.5],
          ["Initech", 0, 0, 0]
        ])
        expectClose(body.ranking[0].sentiment, { pos: 0.5, neu: 0, neg: 0.5 })
        // With region US: A5 (GB) leaves the population.
        expect((await ok("/industry/ranking?topic=crm&engine=chatgpt&region=US&range=7d")).total_responses).toBe(3)
        // The raw path and the rollup path agree where both apply: every engine of every region in one topic
        // is the sum of the topic's answers per region.
        const all = await ok("/industry/ranking?topic=crm&range=30d")
        const us = await ok("/industry/ranking?topic=crm&range=30d&region=US")
        const gb = await ok("/industry/ranking?topic=crm&range=30d&region=gb")
        expect(us.total_responses + gb.total_responses).toBe(all.total_responses)
        for (const row of all.ranking) {
          const inUs = us.ranking.find((r: any) => r.name === row.name)?.mentions ?? 0
          const inGb = gb.ranking.find((r: any) => r.name === row.name)?.mentions ?? 0
          expect({ name: row.name, mentions: inUs + inGb }).toEqual({ name: row.name, mentions: row.mentions })
        }
      })

      it("the competitor reads take brand: a second brand's competitor, in that brand's answers", async () => {
        const prompts = await ok("/industry/competitors/zenith/prompts?brand=bolt&range=30d")
        expect(prompts.competitor).toBe("Zenith")
        expect(prompts.prompts.map((p: any) => [p.prompt, p.appearances, p.brand_mentioned])).toEqual([["fast scooters", 3, 2]])
        const citations = await ok("/industry/competitors/Zenith/citations?brand=bolt&range=30d")
        expect(citations.domains.map((d: any) => d.domain)).toContain("zenith.com")
        // Without brand: the primary brand's competitors, as before; Zenith is none of them.
        expect((await get("/industry/competitors/Zenith/prompts")).status).toBe(404)
        expect(await ok("/industry/competitors/Globex/prompts?brand=acme")).toEqual(await ok("/industry/competitors/Globex/prompts"))
        expect((await get("/industry/competitors/Globex/prompts?brand=nope")).body).toEqual({ error: "brand not found" })
      })
    })

    describe("parameters", () => {
      it("bad values are 400 naming the parameter", async () => {
        const cases: Array<[string, string]> = [
          ["/brands/acme/snapshots?range=1d", "invalid range"],
          ["/brands/acme/mentions?sentiment=good", "invalid sentiment"],
          ["/brands/acme/mentions?region=USA", "invalid region"],
          ["/brands/acme/mentions?language=eng", "invalid language"],
          ["/brands/ACME/prompts", "invalid slug"],
          ["/portfolio?range=30", "invalid range"],
          ["/citations?range=x", "invalid range"],
          ["/citations/fanouts?range=365d", "invalid range"],
          ["/model?brand=Not_A_Slug", "invalid brand"],
          ["/industry/metrics?brand=ACME", "invalid brand"],
          ["/industry/metrics?range=14d", "invalid range"],
          ["/industry/gap?region=USA", "invalid region"],
          ["/industry/ranking?range=all", "invalid range"],
          [`/industry/competitors/${"x".repeat(201)}/prompts`, "invalid name"]
        ]
        for (const [path, prefix] of cases) {
          const { body, status } = await get(path)
          expect({ path, status }).toEqual({ path, status: 400 })
          expect(body.error).toStartWith(`${prefix}:`)
        }
      })

      it("unknown brands are 404 brand not found", async () => {
        for (const path of ["/brands/nope/snapshots", "/brands/nope/mentions", "/brands/nope/prompts", "/model?brand=nope", "/industry/metrics?brand=nope"]) {
          const { body, status } = await get(path)
          expect({ path, status, body }).toEqual({ path, status: 404, body: { error: "brand not found" } })
        }
      })

      it("range, days and tiers helpers", () => {
        // A range of N days ends today (UTC), whatever the hour; the previous period is the N days before.
        expect(periodOf(new Date("2026-03-15T23:59:59.999Z"), 7)).toEqual({ prevFrom: "2026-03-02", from: "2026-03-09", to: "2026-03-15" })
        expect(periodOf(new Date("2026-03-01T00:00:00Z"), 30)).toEqual({ prevFrom: "2026-01-01", from: "2026-01-31", to: "2026-03-01" })
        expect(tiersOf([{ topic: "a", count: 4 }, { topic: "b", count: 3 }, { topic: "c", count: 2 }, { topic: "d", count: 1 }]).map((t) => t.tier)).toEqual([1, 1, 2, 3])
        expect(tiersOf([])).toEqual([])
        expect([...keywordsOf(["The best CRM for startups?", "best crm, 2026", "Éclair café"])].sort()).toEqual(["best", "café", "crm", "startups", "éclair"])
      })
    })

    describe("cross-account isolation", () => {
      it("B sees only its own brand, data and competitors; A sees nothing of B's", async () => {
        const secretsOfB = ["Secret B Brand", "secret-b.example", "secret b prompt", "secret question", "Other"]
        for (const path of [
          "/brands/acme/snapshots?range=90d", "/brands/acme/mentions", "/brands/acme/prompts", "/portfolio?range=90d", "/citations?range=90d",
          "/citations/fanouts?range=90d", "/model", "/topics", "/industry/metrics?range=90d", "/industry/ranking?range=90d", "/industry/gap?range=90d",
          "/industry/competitors/Globex/citations?range=90d", "/industry/competitors/Globex/prompts?range=90d"
        ]) {
          const text = JSON.stringify(await ok(path))
          for (const secret of secretsOfB) expect({ path, leaked: text.includes(secret) }).toEqual({ path, leaked: false })
        }
        // B's own reads: its "acme" (same slug as A's) with its one observation.
        expect((await ok("/brands/acme/snapshots", keyB)).snapshots.map((s: any) => s.total_responses)).toEqual([1])
        expect((await ok("/citations", keyB)).domains.map((d: any) => d.domain)).toEqual(["secret-b.example"])
        expect((await ok("/citations/fanouts", keyB)).prompts.map((g: any) => g.prompt_text)).toEqual(["secret b prompt"])
        expect((await ok("/portfolio", keyB)).brands.map((b: any) => b.slug)).toEqual(["acme"])
        expect((await ok("/topics", keyB)).themes).toEqual([{ theme: "general", count: 1, tier: 1 }])
        expect((await ok("/brands/acme/prompts", keyB)).used_total).toBe(1)
        expect((await get("/brands/bolt/snapshots", keyB)).status).toBe(404)
        expect((await get("/model?brand=bolt", keyB)).status).toBe(404)
        expect((await get("/industry/competitors/Globex/prompts", keyB)).status).toBe(404)
        const bText = JSON.stringify(await ok("/industry/metrics", keyB)) + JSON.stringify(await ok("/industry/gap", keyB))
        for (const secret of ["Globex", "Initech", "Bolt", "acme.com", "reddit.com"]) expect(bText).not.toContain(secret)
      })
    })
  })
}
