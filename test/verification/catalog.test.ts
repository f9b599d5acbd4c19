import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { loadCatalog } from "../../src/catalog/Classifier.js"
import { runClassify } from "../../src/verification/classifyCli.js"
import { Database } from "../../src/platform/Sql.js"
import { bundledMethods } from "../../src/verification/Methods.js"
import { VerificationRepo } from "../../src/verification/Repo.js"
import { bundledSnapshot } from "../../src/verification/Snapshot.js"
import { RANGES_CHANNEL } from "../../src/verification/Verification.js"
import { bearer, createKey, databaseBackends, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { UA } from "../ingestion/fixtures.js"

/**
 * GET /api/v1/catalog (docs/verification.md, "Where it shows"): the catalog page's list of agents and
 * the verification methods each operator publishes, behind the session; the same methods `cli classify`
 * prints, and those of a newer range snapshot once a running server has loaded it.
 */

interface Agent {
  readonly bot: string
  readonly vendor: string
  readonly kind: string
  readonly docs_url: string | null
  readonly robots_only: boolean
  readonly verification_methods: ReadonlyArray<string>
}
interface Catalog {
  readonly version: string
  readonly ranges_snapshot: string
  readonly agents: ReadonlyArray<Agent>
  readonly count: number
}

const BYTESPIDER = "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)"
const YANDEX = "Mozilla/5.0 (compatible; YandexAdditional/3.0; +http://yandex.com/bots)"

/** `cli classify` of some lines: bot -> the verification_methods it prints. */
const classified = async (lines: ReadonlyArray<string>) => {
  let out = ""
  await runClassify(new Blob([lines.join("\n")]).stream(), (chunk) => {
    out += chunk
  })
  const printed = new Map<string, ReadonlyArray<string>>()
  for (const line of out.trim().split("\n")) {
    const row = JSON.parse(line) as { bot: string | null; verification_methods?: ReadonlyArray<string> }
    if (row.bot !== null) printed.set(row.bot, row.verification_methods ?? [])
  }
  return printed
}

for (const backend of databaseBackends()) {
  describe(`GET /api/v1/catalog on ${backend}`, () => {
    let app: TestApp
    let cookie: string

    const catalog = async (): Promise<Catalog> => {
      const response = await app.fetch("/api/v1/catalog", { headers: { cookie } })
      expect(response.status).toBe(200)
      return (await response.json()) as Catalog
    }
    const agent = (body: Catalog, bot: string) => {
      const found = body.agents.find((a) => a.bot === bot)
      expect({ bot, listed: found !== undefined }).toEqual({ bot, listed: true })
      return found!
    }

    beforeAll(async () => {
      app = await makeTestApp(backend)
      cookie = await signup(app, `catalog-${backend}@example.test`)
    }, 60_000)
    afterAll(() => app.dispose())

    it("needs the session: 401 without one, and an API key does not pass", async () => {
      const anonymous = await app.fetch("/api/v1/catalog")
      expect(anonymous.status).toBe(401)
      expect(await anonymous.json()).toEqual({ error: "not signed in" })
      const { key } = await createKey(app, cookie)
      expect((await app.fetch("/api/v1/catalog", { headers: bearer(key) })).status).toBe(401)
    })

    it("lists every agent of the catalog with its operator, kind, page and the bundled snapshot's date", async () => {
      const body = await catalog()
      const bundled = loadCatalog()
      expect(body.version).toBe(bundled.version)
      expect(body.ranges_snapshot).toBe(bundledSnapshot().date)
      expect(body.count).toBe(bundled.agents.length)
      expect(body.agents.map((a) => a.bot)).toEqual(bundled.agents.map((a) => a.bot))
      expect(agent(body, "GPTBot")).toEqual({
        bot: "GPTBot",
        vendor: "OpenAI",
        kind: "training_crawler",
        docs_url: "https://platform.openai.com/docs/bots",
        robots_only: false,
        verification_methods: ["ip_ranges"]
      })
      // A robots.txt token only: listed, and said to be one.
      expect(agent(body, "Google-Extended").robots_only).toBe(true)
    })

    it("gives each agent the methods its operator publishes: what `cli classify` prints", async () => {
      const body = await catalog()
      // Published ranges only; ranges and documented host names; host names only; nothing published.
      expect(agent(body, "GPTBot").verification_methods).toEqual(["ip_ranges"])
      expect(agent(body, "ClaudeBot").verification_methods).toEqual(["ip_ranges"])
      expect(agent(body, "CCBot").verification_methods).toEqual(["ip_ranges", "reverse_dns"])
      expect(agent(body, "YandexAdditional").verification_methods).toEqual(["reverse_dns"])
      expect(agent(body, "Bytespider").verification_methods).toEqual([])
      // Every agent, as the bundled table `cli classify` reads...
      for (const a of body.agents) {
        expect({ bot: a.bot, methods: a.verification_methods }).toEqual({ bot: a.bot, methods: bundledMethods().get(a.bot) ?? [] })
      }
      // ...and as `cli classify` prints them for real User-Agents.
      const printed = await classified([UA.gptbot, UA.chatgptUser, BYTESPIDER, YANDEX, "CCBot/2.0 (https://commoncrawl.org/faq/)"])
      expect([...printed.keys()].sort()).toEqual(["Bytespider", "CCBot", "ChatGPT-User", "GPTBot", "YandexAdditional"])
      for (const [bot, methods] of printed) expect({ bot, methods: agent(body, bot).verification_methods }).toEqual({ bot, methods })
    })

    it("follows a newer range snapshot and key directory once the running server has loaded them", async () => {
      const { publicKey } = generateKeyPairSync("ed25519")
      const x = publicKey.export({ format: "jwk" }).x!
      const base = bundledSnapshot()
      const snapshot = {
        ...base,
        date: "2026-11-23",
        read_from: "test",
        files: [...base.files, {
          file: "bytedance.json",
          operator: "ByteDance",
          source_url: "https://example.test/bytespider.json",
          agents: ["Bytespider"],
          prefixes: ["198.51.100.0/24"]
        }],
        directories: [{ signature_agent: "https://chatgpt.com", operator: "OpenAI", source_url: "test", keys: [{ kty: "OKP", crv: "Ed25519", x }] }]
      }
      await app.run(Effect.gen(function*() {
        yield* Effect.flatMap(VerificationRepo, (repo) => repo.saveSnapshot(JSON.stringify(snapshot)))
        yield* Effect.flatMap(Database, (db) => db.notify(RANGES_CHANNEL, "test")).pipe(Effect.orDie)
      }))
      let body = await catalog()
      for (let i = 0; i < 50 && body.ranges_snapshot !== "2026-11-23"; i++) {
        await Bun.sleep(100)
        body = await catalog()
      }
      expect(body.ranges_snapshot).toBe("2026-11-23")
      expect(agent(body, "Bytespider").verification_methods).toEqual(["ip_ranges"])
      // OpenAI now has a key directory with a key: its agents can be verified by signature too.
      expect(agent(body, "GPTBot").verification_methods).toEqual(["ip_ranges", "web_bot_auth"])
      expect(agent(body, "YandexAdditional").verification_methods).toEqual(["reverse_dns"])
    })
  })
}

describe("the catalog endpoint in the dashboard's OpenAPI document", () => {
  let app: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake")
  }, 30_000)
  afterAll(() => app.dispose())

  it("is declared with the session scheme and its documented response; the customer API's document leaves it out", async () => {
    const dashboard = (await (await app.fetch("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { security?: unknown; summary?: string; description?: string }>>
      components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> }
    }
    const operation = dashboard.paths["/api/v1/catalog"]?.["get"]
    expect(operation?.security).toEqual([{ session: [] }])
    expect(operation?.summary).toContain("verification methods")
    const agent = dashboard.components.schemas["CatalogAgent"]
    for (const field of ["bot", "vendor", "kind", "docs_url", "robots_only", "verification_methods"]) {
      expect({ field, described: (agent?.properties?.[field]?.description ?? "").length > 0 }).toEqual({ field, described: true })
    }
    const publicDoc = (await (await app.fetch("/api/public/v1/openapi.json")).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(publicDoc.paths).some((path) => path.includes("catalog"))).toBe(false)
  })
})
