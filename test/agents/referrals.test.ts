import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { isPerson } from "../../src/catalog/Person.js"
import fixture from "../catalog/fixtures/user-agents.json"
import { loadCatalog, makeClassifier } from "../../src/catalog/Classifier.js"
import { bearer, databaseBackends, json, makeTestApp, type Backend, type TestApp } from "../helpers/app.js"
import { drainUrl, ndjson, postBatch, postDrain, requestRecord, tenant, type Tenant, UA } from "../ingestion/fixtures.js"

/**
 * An AI referral is a request from a person (not a crawler) whose referrer is an answer engine
 * (docs/agents.md, "Who counts as a person"): crawlers the AI catalog does not know, monitors, link-preview
 * fetchers, headless browsers and HTTP libraries arriving with an answer engine's referrer are skipped like
 * any other non-crawler record, and never show in /attribution or /search-performance.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

const NOW = new Date("2026-05-20T12:00:00Z")
const TS = Math.floor(Date.UTC(2026, 4, 20, 10, 0, 0) / 1000)

const BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"
/** Automated User-Agents that are no AI agent of the catalog: none of them is a person. */
const NOT_PEOPLE: ReadonlyArray<string> = [
  UA.googlebot,
  BINGBOT,
  "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
  "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
  "Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
  "Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)",
  "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
  "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  "Twitterbot/1.0",
  "WhatsApp/2.23.20.0",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36",
  "curl/8.5.0",
  "Wget/1.21.4",
  "python-requests/2.31.0",
  "Go-http-client/1.1",
  "axios/1.6.8",
  "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
  "okhttp/4.12.0",
  "Java/17.0.2",
  "Mozilla/5.0 (compatible; Uptime-Kuma/1.23.13)",
  "Dalvik/2.1.0 (Linux; U; Android 13; SM-G991B Build/TP1A.220624.014)",
  ""
]
const PEOPLE: ReadonlyArray<string> = [
  UA.chrome,
  UA.safari,
  FIREFOX,
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0",
  "Mozilla/5.0 (Linux; Android 16; Pixel 10 Pro XL Build/CP1A.260305.018; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/146.0.7680.174 Mobile Safari/537.36 MetaIAB Facebook"
]

describe("isPerson", () => {
  const classify = makeClassifier(loadCatalog().agents)
  it("browsers of people are people", () => {
    for (const ua of PEOPLE) expect([ua, isPerson(ua, classify(ua))]).toEqual([ua, true])
  })
  it("crawlers, bots, monitors, preview fetchers, headless browsers, HTTP libraries and no User-Agent are not", () => {
    for (const ua of NOT_PEOPLE) expect([ua, isPerson(ua, classify(ua))]).toEqual([ua, false])
  })
  it("an AI agent of the catalog is not a person, whatever isbot says of its User-Agent", () => {
    const agents = (fixture as ReadonlyArray<{ ua: string; bot: string | null }>).filter((r) => r.bot !== null)
    expect(agents.length).toBeGreaterThan(100)
    for (const { ua } of agents) expect([ua, isPerson(ua, classify(ua))]).toEqual([ua, false])
    expect(isPerson(UA.chatgptUser, classify(UA.chatgptUser))).toBe(false)
    expect(isPerson(UA.chrome, { bot: "SomeAgenticBrowser", vendor: "Vendor", kind: "agentic_browser" })).toBe(false)
  })
})

for (const backend of backends) {
  describe(`AI referrals come from people only, on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
    }, 60_000)
    afterAll(() => app.dispose())

    const record = (ua: string, ref: string, path = "/pricing") => ({ ua, path, ref, ts: TS, status: 200, method: "GET", ip: "203.0.113.9" })
    const read = async (t: Tenant, what: "attribution" | "search-performance") => {
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/${what}?range=7d`, { headers: bearer(t.key) })
      expect(response.status).toBe(200)
      return (await json(response)) as any
    }

    it("Googlebot from chatgpt.com and bingbot from perplexity.ai: accepted 0, then total_referrals 0", async () => {
      const t = await tenant(app, "growth")
      const response = await postBatch(app, t.key, {
        site_id: t.siteId,
        records: [record(UA.googlebot, "https://chatgpt.com/"), record(BINGBOT, "https://www.perplexity.ai/")]
      })
      expect(response.status).toBe(200)
      expect(await json(response)).toEqual({ accepted: 0, monthly_used: 0, monthly_cap: 1_000_000 })
      const attribution = await read(t, "attribution")
      expect(attribution.total_referrals).toBe(0)
      expect(attribution.engines).toEqual([])
      expect(attribution.landing_pages).toEqual([])
      expect(attribution.vendors).toEqual([])
      expect((await read(t, "search-performance")).totals).toEqual({ search_crawls: 0, agent_fetches: 0, referrals: 0 })
    })

    it("of a batch where every kind of automated client and a few people arrive from answer engines, only the people count", async () => {
      const t = await tenant(app, "growth")
      const refs = ["https://chatgpt.com/", "https://www.perplexity.ai/search?q=acme", "https://gemini.google.com/app"]
      const records = [
        ...NOT_PEOPLE.map((ua, i) => record(ua, refs[i % refs.length]!, `/bot/${i}`)),
        record(UA.chrome, "https://chatgpt.com/c/1", "/pricing"),
        record(UA.safari, "https://www.perplexity.ai/search?q=x", "/docs"),
        record(FIREFOX, "https://chatgpt.com/", "/pricing"),
        // A person without an answer engine's referrer, and an AI crawler with one: neither is a referral.
        record(UA.chrome, "https://www.google.com/", "/"),
        record(UA.gptbot, "https://chatgpt.com/", "/blog")
      ]
      const response = await postBatch(app, t.key, { site_id: t.siteId, records })
      expect(await json(response)).toEqual({ accepted: 1, monthly_used: 1, monthly_cap: 1_000_000 })
      const attribution = await read(t, "attribution")
      expect(attribution.total_referrals).toBe(3)
      expect(attribution.engines).toEqual([
        { engine: "chatgpt", referrals: 2, share: 2 / 3 },
        { engine: "perplexity", referrals: 1, share: 1 / 3 }
      ])
      expect(attribution.landing_pages).toEqual([
        { path: "/pricing", referrals: 2, by_engine: { chatgpt: 2 } },
        { path: "/docs", referrals: 1, by_engine: { perplexity: 1 } }
      ])
      expect((await read(t, "search-performance")).totals).toEqual({ search_crawls: 0, agent_fetches: 0, referrals: 3 })
    })

    it("the drain skips bots with an answer engine's referrer as before (in skipped), and stores no referral for them", async () => {
      const t = await tenant(app, "growth")
      const response = await postDrain(app, t.key, drainUrl(t.siteId), ndjson([
        requestRecord({ ua: UA.googlebot, path: "/", referer: "https://chatgpt.com/" }),
        requestRecord({ ua: BINGBOT, path: "/a", referer: "https://www.perplexity.ai/" }),
        requestRecord({ ua: "curl/8.5.0", path: "/b", referer: "https://chatgpt.com/" }),
        requestRecord({ ua: UA.chrome, path: "/pricing", referer: "https://chatgpt.com/" }),
        requestRecord({ ua: UA.gptbot, path: "/blog" })
      ]))
      expect(response.status).toBe(200)
      expect(await json(response)).toEqual({ accepted: 1, scanned: 5, skipped: 4, monthly_used: 1, monthly_cap: 1_000_000 })
      const attribution = await read(t, "attribution")
      expect(attribution.total_referrals).toBe(1)
      expect(attribution.landing_pages).toEqual([{ path: "/pricing", referrals: 1, by_engine: { chatgpt: 1 } }])
    })
  })
}
