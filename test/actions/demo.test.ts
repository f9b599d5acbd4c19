import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { DEMO_BRANDS } from "../../src/app/Demo.js"
import { bearer, json, makeTestApp, type TestApp } from "../helpers/app.js"
import { seedDemo } from "../helpers/demo.js"

/**
 * The demo workspace shows every kind of action (docs/actions.md): its data is made so (a removed page,
 * no /llms.txt, spoofed GPTBot hits, a prompt a competitor wins with a source cited only beside it).
 */
describe("the demo workspace's actions (pglite)", () => {
  let app: TestApp
  let key: string
  beforeAll(async () => {
    app = await makeTestApp("pglite")
    key = await seedDemo(app, { days: 7, engines: ["chatgpt", "perplexity"], promptsPerBrand: 6 })
  }, 300_000)
  afterAll(() => app.dispose())

  it("lists at least one action of each kind for the first demo brand", async () => {
    const brand = DEMO_BRANDS[0]!
    const response = await app.fetch(`/api/public/v1/brands/${brand.slug}/actions?range=7d`, { headers: bearer(key) })
    expect(response.status).toBe(200)
    const body = (await json(response)) as { actions: Array<{ kind: string; evidence: Record<string, unknown> }> }
    const kinds = new Set(body.actions.map((a) => a.kind))
    expect([...kinds].sort()).toEqual(["block_spoofed", "earn_citations_from", "fix_crawler_errors", "serve_llms_txt", "win_prompt"])
    const of = (kind: string) => body.actions.filter((a) => a.kind === kind).map((a) => a.evidence)
    expect(of("fix_crawler_errors").map((e) => e["path"])).toContain("/old-page")
    expect(of("block_spoofed").map((e) => e["bot"])).toContain("GPTBot")
    expect(of("earn_citations_from").map((e) => e["domain"])).toContain(brand.lostPrompt!.gapDomain)
    expect(of("win_prompt")).toContainEqual(expect.objectContaining({ prompt: brand.lostPrompt!.prompt, competitor: brand.lostPrompt!.competitor, brand_rate: 0, competitor_rate: 1 }))
  })
})
