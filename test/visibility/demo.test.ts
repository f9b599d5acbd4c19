import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ApiKeys } from "../../src/accounts/ApiKeys.js"
import { DEMO_EMAIL, DEMO_PASSWORD, runDemo } from "../../src/app/Demo.js"
import { makeServiceRuntime, query, type ServiceRuntime } from "./runtime.js"

describe("the demo workspace (pglite, small)", () => {
  let rt: ServiceRuntime
  beforeAll(async () => {
    rt = await makeServiceRuntime("pglite")
  })
  afterAll(() => rt.dispose())

  const options = { days: 3, engines: ["chatgpt", "perplexity", "grok"], promptsPerBrand: 4 }
  const counts = () =>
    rt.runPromise(
      Effect.all({
        accounts: query<{ n: number }>("select count(*)::int as n from accounts"),
        plan: query<{ plan: string }>("select plan_id as plan from accounts"),
        brands: query<{ slug: string; competitors: number; prompts: number }>(
          `select b.slug, (select count(*)::int from competitors c where c.brand_id = b.id) as competitors,
                  (select count(*)::int from prompts p where p.brand_id = b.id) as prompts from brands b order by b.id`
        ),
        observations: query<{ n: number; days: number; engines: number; regions: number }>(
          "select count(*)::int as n, count(distinct day)::int as days, count(distinct engine)::int as engines, count(distinct region)::int as regions from observations"
        ),
        mentions: query<{ n: number }>("select count(*)::int as n from mentions"),
        citations: query<{ bucket: string }>("select distinct bucket from citations order by bucket"),
        daily: query<{ n: number }>("select sum(responses)::int as n from observation_daily"),
        keys: query<{ active: number }>("select count(*) filter (where revoked_at is null)::int as active from api_keys")
      })
    )

  it("creates the account, brands, competitors, prompts and analysed observations; a second run refreshes", async () => {
    const first = await rt.runPromise(runDemo(options))
    const after1 = await counts()
    const second = await rt.runPromise(runDemo(options))
    const after2 = await counts()

    expect(first.email).toBe(DEMO_EMAIL)
    expect(first.apiKey.startsWith("aivkey_")).toBe(true)
    expect(second.apiKey).not.toBe(first.apiKey)
    expect(after1.accounts[0]!.n).toBe(1)
    expect(after1.plan[0]!.plan).toBe("growth")
    expect(after1.brands).toEqual([
      { slug: "northwind-crm", competitors: 5, prompts: 4 },
      { slug: "bramble-outfitters", competitors: 5, prompts: 4 }
    ])
    // 2 brands x 4 prompts x 3 engines x 2 regions x 3 days x 3 samples
    expect(after1.observations[0]).toEqual({ n: 432, days: 3, engines: 3, regions: 2 })
    expect(after1.mentions[0]!.n).toBeGreaterThan(432)
    expect(after1.citations.map((c) => c.bucket)).toEqual(["competitor", "earned", "owned", "reference", "ugc"])
    expect(after1.daily[0]!.n).toBe(432)
    // Every (prompt, engine, region, day) has 3 samples, each its own observed_at, and they disagree
    // often enough for the intervals to mean something (the brand named in some samples, not all).
    const samples = await rt.runPromise(query<{ groups: number; three: number; split: number }>(
      `select count(*)::int as groups, (count(*) filter (where stamps = 3))::int as three,
              (count(*) filter (where named > 0 and named < 3))::int as split
       from (select count(distinct observed_at) as stamps, count(*) filter (where brand_mentioned) as named
             from observations group by brand_id, prompt_id, engine, region, day) g`
    ))
    expect(samples[0]!.groups).toBe(144)
    expect(samples[0]!.three).toBe(144)
    expect(samples[0]!.split).toBeGreaterThan(20)
    expect(after2).toEqual(after1) // refreshed, not duplicated
    expect(after2.keys[0]!.active).toBe(1)
    expect(second.brands.map((b) => b.observations)).toEqual([216, 216])

    // The printed login works, and so does the printed key.
    const login = await rt.runPromise(Effect.either((Effect.flatMap(Accounts, (a) => a.login({ email: DEMO_EMAIL, password: DEMO_PASSWORD })))))
    expect(login._tag).toBe("Right")
    const auth = await rt.runPromise(Effect.flatMap(ApiKeys, (k) => k.authenticate(`Bearer ${second.apiKey}`)))
    expect(auth.accountId).toBe(second.accountId)
  }, 120_000)
})
