import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { mainLanguageOf, resolveLocale } from "../../src/visibility/Regions.js"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type Backend, type TestApp } from "../helpers/app.js"

/**
 * Scope by region (docs/visibility.md): `/brands/{slug}/mentions` and `/industry/metrics` read the brand's
 * primary region and language unless overridden; `region` given alone reads that region's main language from
 * the ISO table, even for the brand's own primary region (a DE brand whose primary language is en reads de
 * for `?region=DE`).
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

describe("the ISO table", () => {
  // Two-letter codes the runtime names that are not assigned ISO 3166-1 alpha-2 country codes.
  const NOT_ASSIGNED = new Set("AC AN BU CP CQ CS DD DG DY EA EU EZ FX HV IC NH QO RH SU TA TP UK UN VD XA XB XK YD YU ZR ZZ".split(" "))
  const names = new Intl.DisplayNames(["en"], { type: "region" })
  const assigned: Array<string> = []
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b)
      const name = names.of(code)
      if (name !== undefined && name !== code && !NOT_ASSIGNED.has(code)) assigned.push(code)
    }
  }

  it("has an ISO-639-1 main language for each of the 249 assigned country codes, and for no other code", () => {
    expect(assigned).toHaveLength(249)
    for (const code of assigned) expect([code, /^[a-z]{2}$/.test(mainLanguageOf(code) ?? "")]).toEqual([code, true])
    for (const code of NOT_ASSIGNED) expect([code, mainLanguageOf(code)]).toEqual([code, undefined])
  })

  it("main languages", () => {
    const expected: Record<string, string> = {
      DE: "de", AT: "de", CH: "de", US: "en", GB: "en", FR: "fr", BE: "nl", ES: "es", MX: "es", BR: "pt", PT: "pt",
      JP: "ja", CN: "zh", KR: "ko", IN: "hi", RU: "ru", UA: "uk", IT: "it", NL: "nl", SE: "sv", PL: "pl", TR: "tr",
      CW: "nl", PG: "en", SN: "fr", CD: "fr", ET: "am", IL: "he", IR: "fa", VN: "vi", ID: "id", GL: "kl", FO: "fo"
    }
    for (const [code, language] of Object.entries(expected)) expect([code, mainLanguageOf(code.toLowerCase())]).toEqual([code, language])
  })

  it("resolveLocale: both given, region alone, language alone, neither", () => {
    const brand = { primaryRegion: "DE", primaryLanguage: "en" }
    expect(resolveLocale(brand, "gb", "FR")).toEqual({ region: "GB", language: "fr" })
    expect(resolveLocale(brand, "de", undefined)).toEqual({ region: "DE", language: "de" })
    expect(resolveLocale(brand, "AT", "")).toEqual({ region: "AT", language: "de" })
    expect(resolveLocale(brand, "XK", undefined)).toEqual({ region: "XK", language: "en" })
    expect(resolveLocale(brand, undefined, "DE")).toEqual({ region: "DE", language: "de" })
    expect(resolveLocale(brand, "", "fr")).toEqual({ region: "DE", language: "fr" })
    expect(resolveLocale(brand, undefined, undefined)).toEqual({ region: "DE", language: "en" })
    expect(resolveLocale(brand, "", "")).toEqual({ region: "DE", language: "en" })
  })
})

for (const backend of backends) {
  const db = backend !== "fake"
  describe(`region given alone reads that region's main language, on ${backend}`, () => {
    const NOW = new Date("2026-03-15T12:00:00Z")
    let app: TestApp
    let key: string

    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      const cookie = await signup(app, "regions@kraut.test")
      key = (await createKey(app, cookie)).key
      // Primary region DE, primary language en: the two disagree on purpose.
      await createBrand(app, cookie, "kraut", { brand_name: "Kraut", domain: "kraut.de", primary_region: "DE", primary_language: "en" })
      const obs = (engine: string, region: string, language: string, at: string, response: string) => ({
        prompt: "best sauerkraut tool",
        engine,
        region,
        language,
        observed_at: at,
        response,
        citations: []
      })
      const response = await app.fetch("/api/v1/me/brands/kraut/observations", {
        method: "POST",
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify([
          obs("chatgpt", "DE", "en", "2026-03-14T08:00:00Z", "Kraut is a great tool."),
          obs("chatgpt", "DE", "de", "2026-03-14T09:00:00Z", "Kraut ist ein gutes Werkzeug."),
          obs("perplexity", "DE", "de", "2026-03-13T09:00:00Z", "Kraut ist gut."),
          obs("chatgpt", "US", "en", "2026-03-12T09:00:00Z", "Kraut is fine."),
          obs("gemini", "AT", "de", "2026-03-12T10:00:00Z", "Kraut ist solide.")
        ])
      })
      expect(await json(response)).toEqual({ imported: 5, skipped: 0, errors: [] })
    }, 60_000)
    afterAll(() => app.dispose())

    const ok = async (path: string) => {
      const response = await app.fetch(`/api/public/v1${path}`, { headers: bearer(key) })
      const body = (await json(response)) as any
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`)
      return body
    }
    const mentions = async (query: string) => {
      const body = await ok(`/brands/kraut/mentions${query}`)
      return { region: body.region, language: body.language, count: body.count, engines: body.mentions.map((m: any) => m.engine) }
    }
    const metrics = async (query: string) => {
      const body = await ok(`/industry/metrics?range=7d${query}`)
      return { region: body.region, language: body.language, responses: body.own.total_responses, mentions: body.own.total_mentions }
    }

    it("mentions?region=DE for a DE brand whose primary language is en: language de, only the German answers", async () => {
      expect(await mentions("?region=DE")).toEqual(db
        ? { region: "DE", language: "de", count: 2, engines: ["chatgpt", "perplexity"] }
        : { region: "DE", language: "de", count: 0, engines: [] })
      expect(await mentions("?region=de")).toEqual(await mentions("?region=DE"))
    })

    it("mentions: neither given, both given, language alone, another region alone, a code outside the table", async () => {
      const n = (count: number, engines: Array<string>) => (db ? { count, engines } : { count: 0, engines: [] })
      expect(await mentions("")).toEqual({ region: "DE", language: "en", ...n(1, ["chatgpt"]) })
      expect(await mentions("?region=DE&language=en")).toEqual({ region: "DE", language: "en", ...n(1, ["chatgpt"]) })
      expect(await mentions("?language=DE")).toEqual({ region: "DE", language: "de", ...n(2, ["chatgpt", "perplexity"]) })
      expect(await mentions("?region=US")).toEqual({ region: "US", language: "en", ...n(1, ["chatgpt"]) })
      expect(await mentions("?region=AT")).toEqual({ region: "AT", language: "de", ...n(1, ["gemini"]) })
      expect(await mentions("?region=AT&language=en")).toEqual({ region: "AT", language: "en", ...n(0, []) })
      expect(await mentions("?region=XK")).toEqual({ region: "XK", language: "en", ...n(0, []) })
    })

    it("industry/metrics follows the same rule", async () => {
      const n = (responses: number, mentionCount: number) => (db ? { responses, mentions: mentionCount } : { responses: 0, mentions: 0 })
      expect(await metrics("&region=DE")).toEqual({ region: "DE", language: "de", ...n(2, 2) })
      expect(await metrics("&brand=kraut&region=de")).toEqual({ region: "DE", language: "de", ...n(2, 2) })
      expect(await metrics("")).toEqual({ region: "DE", language: "en", ...n(1, 1) })
      expect(await metrics("&region=DE&language=EN")).toEqual({ region: "DE", language: "en", ...n(1, 1) })
      expect(await metrics("&language=de")).toEqual({ region: "DE", language: "de", ...n(2, 2) })
      expect(await metrics("&region=AT")).toEqual({ region: "AT", language: "de", ...n(1, 1) })
    })
  })
}
