import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { postBatch, setPlan, UA } from "../ingestion/fixtures.js"

/**
 * GET /brands/{slug}/actions (docs/actions.md) over hand-made crawler hits and answers with known
 * answers: each rule on both sides of its thresholds, the order, the cap of 20, the twin, and every
 * number of every action checked against the endpoint that reports it for the same range (the pages
 * list with status, /agents with verification, /industry/gap, the competitor's prompts and /mentions).
 *
 * Today is 2026-05-20 (the app's Clock); every hit and answer is of today or yesterday, so 7d, 30d and
 * 90d hold the same population. Brands of one account: acme (primary; competitors Globex, Initech),
 * bolt (competitor Zenith) and many (25 failing pages: the cap).
 *
 * acme's crawler hits (no client IP = unverified; 203.0.113.9 = outside OpenAI's ranges = spoofed):
 *   /docs/big     GPTBot 15 x 200 (4 of them spoofed), GPTBot 4 x 404, ClaudeBot 1 x 503  -> 20 hits, 5 errors (25%)
 *   /docs/broken  ClaudeBot 1 x 404, PerplexityBot 1 x 500, 7 x 200, 1 without status     -> 10 hits, 2 errors (20%): at the threshold
 *   /docs/almost  PerplexityBot 9 x 200, 2 x 404                                         -> 11 hits, 18%: under
 *   /docs/few     PerplexityBot 9 x 404                                                  -> 9 hits: under
 *   /llms.txt     PerplexityBot 2 x 404, ClaudeBot 1 x 404                               -> serve_llms_txt
 *   /pricing      GPTBot 1 x 200; ChatGPT-User 20 x 200 (3 spoofed: 15%, under)
 *   GPTBot: 20 hits, 4 spoofed (20%): block_spoofed at the threshold.
 * bolt: /llms.txt PerplexityBot 1 x 404 + 1 x 410 (not every hit 404); ChatGPT-User 19 hits, all spoofed (under 20 hits).
 *
 * acme's answers (prompt: answers; who is named; cited domains):
 *   "best crm"          6: Globex 3, Initech 3 (tie: Globex by name), Acme 0       -> win_prompt, 50% at the threshold
 *   "crm pricing"      10: Initech 8, Acme 1 (10%, at the threshold)              -> win_prompt, first (0.8 - 0.1)
 *   "crm for startups"  4: Globex 4                                              -> under 5 answers
 *   "crm reviews"      10: Globex 4 (40%)                                        -> under 50%
 *   "crm integrations" 10: Globex 9, Acme 2 (20%)                                -> brand over 10%
 *   gap: trustradius.com 5 answers, g2.com 3 (at the threshold), capterra.com 2 (under), reddit.com cited with Acme once (not a gap)
 * bolt: "fast scooters" 4 answers naming Zenith, citing zenith-reviews.com 3 times -> earn_citations_from (a brand not primary).
 */

const NOW = new Date(Date.UTC(2026, 4, 20, 12, 0, 0))
const TS = Math.floor(NOW.getTime() / 1000) - 3600
const SPOOF_IP = "203.0.113.9"

const hit = (ua: string, path: string, status: number, ip?: string) => ({ ua, path, ts: TS, status, ...(ip === undefined ? {} : { ip }) })
const times = <A>(n: number, make: (i: number) => A): Array<A> => Array.from({ length: n }, (_, i) => make(i))

const ACME_HITS = [
  ...times(15, (i) => hit(UA.gptbot, "/docs/big", 200, i < 4 ? SPOOF_IP : undefined)),
  ...times(4, () => hit(UA.gptbot, "/docs/big", 404)),
  hit(UA.claudebot, "/docs/big", 503),
  hit(UA.claudebot, "/docs/broken", 404),
  hit(UA.perplexitybot, "/docs/broken", 500),
  ...times(7, () => hit(UA.perplexitybot, "/docs/broken", 200)),
  hit(UA.perplexitybot, "/docs/broken", -1),
  ...times(9, () => hit(UA.perplexitybot, "/docs/almost", 200)),
  ...times(2, () => hit(UA.perplexitybot, "/docs/almost", 404)),
  ...times(9, () => hit(UA.perplexitybot, "/docs/few", 404)),
  ...times(2, () => hit(UA.perplexitybot, "/llms.txt", 404)),
  hit(UA.claudebot, "/llms.txt", 404),
  hit(UA.gptbot, "/pricing", 200),
  ...times(20, (i) => hit(UA.chatgptUser, "/pricing", 200, i < 3 ? SPOOF_IP : undefined))
]
const BOLT_HITS = [
  hit(UA.perplexitybot, "/llms.txt", 404),
  hit(UA.perplexitybot, "/llms.txt", 410),
  ...times(19, () => hit(UA.chatgptUser, "/", 200, SPOOF_IP))
]
const MANY_HITS = [
  ...times(25, (p) => times(10, () => hit(UA.perplexitybot, `/p${String(p + 1).padStart(2, "0")}`, 404))).flat(),
  hit(UA.perplexitybot, "/llms.txt", 404)
]

let minute = 0
const answer = (prompt: string, names: ReadonlyArray<string>, citations: ReadonlyArray<string> = [], region = "US") => ({
  prompt,
  engine: ["chatgpt", "perplexity", "gemini"][minute % 3],
  region,
  language: "en",
  observed_at: new Date(NOW.getTime() - 2 * 3600_000 - 60_000 * ++minute).toISOString(),
  response: names.length === 0 ? "There are many options to compare." : `${names.join(" and ")} are popular choices.`,
  citations: citations.map((domain) => `https://${domain}/page-${minute}`)
})

const ACME_ANSWERS = [
  answer("best crm", ["Globex"], ["g2.com"]),
  answer("best crm", ["Globex"], ["g2.com"]),
  answer("best crm", ["Globex", "Initech"], ["trustradius.com"]),
  answer("best crm", ["Initech"]),
  answer("best crm", ["Initech"], [], "GB"),
  answer("best crm", []),
  answer("crm pricing", ["Initech"], ["g2.com"]),
  ...times(4, () => answer("crm pricing", ["Initech"], ["trustradius.com"], "GB")),
  answer("crm pricing", ["Initech"], ["capterra.com"]),
  answer("crm pricing", ["Initech"], ["capterra.com"]),
  answer("crm pricing", ["Initech"], ["reddit.com"]),
  answer("crm pricing", ["Acme"], ["reddit.com"]),
  answer("crm pricing", []),
  ...times(4, () => answer("crm for startups", ["Globex"])),
  ...times(3, () => answer("crm reviews", ["Globex"], ["reddit.com"])),
  answer("crm reviews", ["Globex"]),
  ...times(6, () => answer("crm reviews", [])),
  ...times(2, () => answer("crm integrations", ["Globex", "Acme"])),
  ...times(7, () => answer("crm integrations", ["Globex"])),
  answer("crm integrations", [])
]
const BOLT_ANSWERS = times(4, (i) => answer("fast scooters", ["Zenith"], i < 3 ? ["zenith-reviews.com"] : []))

interface Action {
  kind: string
  title: string
  why: string
  evidence: Record<string, unknown>
  link: string
}
interface ActionsBody {
  brand: string
  range: string
  actions: Array<Action>
  count: number
  looked_at: Record<string, number>
}

const EXPECTED_ACME = [
  { kind: "fix_crawler_errors", evidence: { path: "/docs/big", error_hits: 5, hits: 20, statuses: { "404": 4, "503": 1 }, bots: ["GPTBot", "ClaudeBot"] } },
  { kind: "fix_crawler_errors", evidence: { path: "/docs/broken", error_hits: 2, hits: 10, statuses: { "404": 1, "500": 1 }, bots: ["ClaudeBot", "PerplexityBot"] } },
  { kind: "serve_llms_txt", evidence: { hits: 3, bots: ["PerplexityBot", "ClaudeBot"] } },
  { kind: "block_spoofed", evidence: { bot: "GPTBot", spoofed_hits: 4, hits: 20 } },
  { kind: "earn_citations_from", evidence: { domain: "trustradius.com", answers: 5, competitors: ["Globex", "Initech"] } },
  { kind: "earn_citations_from", evidence: { domain: "g2.com", answers: 3, competitors: ["Globex", "Initech"] } },
  { kind: "win_prompt", evidence: { prompt: "crm pricing", answers: 10, brand_rate: 0.1, competitor: "Initech", competitor_rate: 0.8 } },
  { kind: "win_prompt", evidence: { prompt: "best crm", answers: 6, brand_rate: 0, competitor: "Globex", competitor_rate: 0.5 } }
]

for (const backend of databaseBackends()) {
  describe(`GET /brands/{slug}/actions on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    let key: string
    let otherKey: string

    const get = async (path: string, token = key) => {
      const response = await app.fetch(`/api/public/v1${path}`, { headers: bearer(token) })
      return { status: response.status, body: (await json(response)) as any }
    }
    const actionsOf = async (slug: string, range = "30d") => {
      const { status, body } = await get(`/brands/${slug}/actions?range=${range}`)
      expect(status).toBe(200)
      return body as ActionsBody
    }
    const post = async (path: string, body: unknown) => {
      const response = await app.fetch(path, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify(body) })
      expect(response.status).toBeLessThan(300)
      return json(response)
    }

    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      cookie = await signup(app, "actions@acme.test")
      await setPlan(app, "actions@acme.test", "growth")
      key = (await createKey(app, cookie, "actions")).key
      const sites: Record<string, string> = {}
      for (const slug of ["acme", "bolt", "many"]) sites[slug] = (await createBrand(app, cookie, slug)).site_id
      await post("/api/v1/me/brands/acme/competitors", { name: "Globex", domain: "globex.com" })
      await post("/api/v1/me/brands/acme/competitors", { name: "Initech", domain: "initech.com" })
      await post("/api/v1/me/brands/bolt/competitors", { name: "Zenith", domain: "zenith.com" })
      for (const [slug, records] of [["acme", ACME_HITS], ["bolt", BOLT_HITS], ["many", MANY_HITS]] as const) {
        const response = await postBatch(app, key, { site_id: sites[slug], records })
        expect(response.status).toBe(200)
        expect(((await json(response)) as { accepted: number }).accepted).toBe(records.length)
      }
      for (const [slug, answers] of [["acme", ACME_ANSWERS], ["bolt", BOLT_ANSWERS]] as const) {
        const imported = (await post(`/api/v1/me/brands/${slug}/observations`, answers)) as { imported: number }
        expect(imported.imported).toBe(answers.length)
      }
      const other = await signup(app, "other@actions.test")
      await createBrand(app, other, "theirs")
      otherKey = (await createKey(app, other, "other")).key
    }, 120_000)
    afterAll(() => app.dispose())

    it("lists each rule's actions, in the contract's order, with exactly the evidence fields", async () => {
      const body = await actionsOf("acme")
      expect(body.brand).toBe("acme")
      expect(body.range).toBe("30d")
      expect(body.actions.map(({ kind, evidence }) => ({ kind, evidence }))).toEqual(EXPECTED_ACME)
      expect(body.count).toBe(EXPECTED_ACME.length)
      for (const action of body.actions) {
        expect(action.link.startsWith("#/brands/acme/")).toBe(true)
        expect(action.title.length).toBeGreaterThan(5)
        expect(action.why.length).toBeGreaterThan(20)
      }
      // The sentences carry the numbers.
      expect(body.actions[0]!.why).toContain("5 of 20")
      expect(body.actions[3]!.why).toContain("4 of 20")
      expect(body.actions[6]!.why).toContain("8 of the 10")
      expect(body.looked_at).toEqual({ crawler_hits: ACME_HITS.length, bots: 4, answers: ACME_ANSWERS.length, prompts: 5, gap_domains: 3 })
    })

    it("defaults to 30d, answers the same population at 7d and 90d, and holds no action under a threshold", async () => {
      const { body } = await get("/brands/acme/actions")
      expect(body.range).toBe("30d")
      expect(body.actions).toEqual((await actionsOf("acme")).actions)
      for (const range of ["7d", "90d"]) {
        expect((await actionsOf("acme", range)).actions.map((a) => a.evidence)).toEqual(EXPECTED_ACME.map((a) => a.evidence))
      }
      const bolt = await actionsOf("bolt")
      // 410 is not 404; 19 hits are under 20; 4 answers are under 5: only the gap of this (not primary) brand.
      expect(bolt.actions.map(({ kind, evidence }) => ({ kind, evidence }))).toEqual([
        { kind: "earn_citations_from", evidence: { domain: "zenith-reviews.com", answers: 3, competitors: ["Zenith"] } }
      ])
    })

    it("caps the list at 20 after sorting every action", async () => {
      const body = await actionsOf("many")
      expect(body.count).toBe(20)
      expect(body.actions.map((a) => a.evidence["path"])).toEqual(times(20, (p) => `/p${String(p + 1).padStart(2, "0")}`))
      // The 21st and later (5 pages and serve_llms_txt) are left out.
      expect(body.actions.every((a) => a.kind === "fix_crawler_errors")).toBe(true)
    })

    it("every number equals what the other endpoints report for the same range", async () => {
      for (const range of ["7d", "30d", "90d"]) {
        const { actions } = await actionsOf("acme", range)
        const dashboard = (await get(`/brands/acme/agents?range=${range}`)).body
        const spoofedDashboard = (await get(`/brands/acme/agents?range=${range}&verification=spoofed`)).body
        const gap = (await get(`/industry/gap?range=${range}`)).body
        const mentions = (await get("/brands/acme/mentions")).body
        const pageRow = async (path: string, extra = "") => {
          const { body } = await get(`/brands/acme/agents/pages?range=${range}&q=${encodeURIComponent(path)}${extra}`)
          return (body.pages as Array<{ path: string; hits: number; errors: number; bots: Array<string> }>).find((p) => p.path === path)
        }
        for (const action of actions) {
          const e = action.evidence as any
          if (action.kind === "fix_crawler_errors") {
            const row = (await pageRow(e.path))!
            expect([row.hits, row.errors]).toEqual([e.hits, e.error_hits])
            const errorRow = (await pageRow(e.path, "&status=error"))!
            expect(errorRow.hits).toBe(e.error_hits)
            expect([...errorRow.bots].sort()).toEqual([...e.bots].sort())
            for (const [code, n] of Object.entries(e.statuses)) expect((await pageRow(e.path, `&status=${code}`))!.hits).toBe(n as number)
            const perBot = await Promise.all((e.bots as Array<string>).map(async (bot) => (await pageRow(e.path, `&status=error&bot=${bot}`))!.hits))
            expect(perBot.reduce((a, b) => a + b, 0)).toBe(e.error_hits)
            expect([...perBot].sort((a, b) => b - a)).toEqual(perBot)
          } else if (action.kind === "serve_llms_txt") {
            const row = (await pageRow("/llms.txt"))!
            expect(row.hits).toBe(e.hits)
            expect((await pageRow("/llms.txt", "&status=404"))!.hits).toBe(e.hits)
            expect([...row.bots].sort()).toEqual([...e.bots].sort())
          } else if (action.kind === "block_spoofed") {
            const hitsOf = (d: any) => d.breakdowns.by_bot.find((b: { bot: string }) => b.bot === e.bot)?.hits
            expect(hitsOf(dashboard)).toBe(e.hits)
            expect(hitsOf(spoofedDashboard)).toBe(e.spoofed_hits)
          } else if (action.kind === "earn_citations_from") {
            const row = gap.domains.find((d: { domain: string }) => d.domain === e.domain)
            expect([row.opportunity, row.competitors]).toEqual([e.answers, e.competitors])
          } else {
            const prompts = (await get(`/industry/competitors/${e.competitor}/prompts?range=${range}`)).body.prompts
            const row = prompts.find((p: { prompt: string }) => p.prompt === e.prompt)
            expect(row.appearances / e.answers).toBeCloseTo(e.competitor_rate, 4)
            // The brand's mentions of the prompt (every answer naming Acme is in the primary region, US).
            const brandMentions = mentions.mentions.filter((m: { prompt: string }) => m.prompt === e.prompt).length
            expect(brandMentions / e.answers).toBeCloseTo(e.brand_rate, 4)
            expect(action.link).toContain(`competitor=${e.competitor}`)
          }
        }
      }
    })

    it("the twin answers the signed-in account the same; errors like the other brand reads", async () => {
      const twin = await app.fetch("/api/v1/me/brands/acme/actions?range=7d", { headers: { cookie } })
      expect(twin.status).toBe(200)
      expect(await json(twin)).toEqual(await actionsOf("acme", "7d"))
      expect((await app.fetch("/api/v1/me/brands/acme/actions")).status).toBe(401)
      expect((await get("/brands/acme/actions?range=8d")).status).toBe(400)
      expect((await get("/brands/acme/actions", "aivkey_nope")).status).toBe(401)
      const foreign = await get("/brands/acme/actions", otherKey)
      expect(foreign).toEqual({ status: 404, body: { error: "brand not found" } })
      const empty = await get("/brands/theirs/actions", otherKey)
      expect(empty.status).toBe(200)
      expect(empty.body.actions).toEqual([])
      expect(empty.body.looked_at).toEqual({ crawler_hits: 0, bots: 0, answers: 0, prompts: 0, gap_domains: 0 })
    })
  })
}
