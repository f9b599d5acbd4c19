import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type Backend, type TestApp } from "./helpers/app.js"

/**
 * The spine over HTTP, in process. The same calls run against in-memory fake repositories
 * and against every database back end (embedded PGlite always; a PostgreSQL server when
 * TEST_DATABASE_URL is set), so the SQL and the fakes keep the same contract.
 */
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

for (const backend of backends) {
  describe(`spine on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    let key: string
    let brandSiteId: string

    beforeAll(async () => {
      app = await makeTestApp(backend)
      cookie = await signup(app, "owner@acme.test")
      key = (await createKey(app, cookie, "main")).key
      brandSiteId = (await createBrand(app, cookie, "acme")).site_id
    }, 30_000) // a PGlite cold start on a loaded machine can pass bun's 5 s hook default
    afterAll(() => app.dispose())

    const get = (path: string, headers: Record<string, string> = bearer(key)) => app.fetch(path, { headers })

    describe("bearer authentication (docs/decisions.md, Authentication; byte-exact bodies)", () => {
      const cases: ReadonlyArray<[string, Record<string, string>, string]> = [
        ["no Authorization header", {}, `{"error":"missing Authorization header"}`],
        ["another scheme", { authorization: "Basic YWxhZGRpbjpvcGVuc2VzYW1l" }, `{"error":"Authorization must be Bearer <token>"}`],
        ["a bare token", { authorization: "aivkey_abc" }, `{"error":"Authorization must be Bearer <token>"}`],
        ["Bearer with nothing after it", { authorization: "Bearer" }, `{"error":"empty bearer token"}`],
        ["Bearer and spaces", { authorization: "Bearer    " }, `{"error":"empty bearer token"}`],
        ["an unknown key", { authorization: "Bearer aivkey_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, `{"error":"invalid API key"}`],
        ["a token without the prefix", { authorization: "Bearer sk-something" }, `{"error":"invalid API key"}`]
      ]
      for (const [name, headers, body] of cases) {
        it(`401 for ${name}`, async () => {
          const response = await get("/api/public/v1/brands", headers)
          expect(response.status).toBe(401)
          expect(response.headers.get("content-type")).toContain("application/json")
          expect(await response.text()).toBe(body)
        })
      }

      it("a session cookie alone is not accepted on the public surface", async () => {
        const response = await get("/api/public/v1/brands", { cookie })
        expect(response.status).toBe(401)
        expect(await response.text()).toBe(`{"error":"missing Authorization header"}`)
      })

      it("the scheme is case-insensitive", async () => {
        const response = await get("/api/public/v1/brands", { authorization: `bearer ${key}` })
        expect(response.status).toBe(200)
      })

      it("an API key cannot call the dashboard surface", async () => {
        for (const path of ["/api/v1/me", "/api/v1/me/api-keys"]) {
          const response = await get(path)
          expect(response.status).toBe(401)
        }
        const create = await app.fetch("/api/v1/me/api-keys", {
          method: "POST",
          headers: { ...bearer(key), "content-type": "application/json" },
          body: JSON.stringify({ name: "sneaky" })
        })
        expect(create.status).toBe(401)
      })
    })

    describe("GET /brands and /brands/{slug}", () => {
      it("lists the account's brands with count and the plan's limit", async () => {
        const response = await get("/api/public/v1/brands")
        expect(response.status).toBe(200)
        const body = (await json(response)) as { brands: Array<Record<string, unknown>>; count: number; limit: number }
        expect(body.count).toBe(1)
        expect(body.limit).toBe(1) // free plan: one brand
        const brand = body.brands[0]!
        expect(Object.keys(brand).sort()).toEqual(
          ["added_at", "brand_name", "brand_slug", "domain", "id", "next_scan_at", "scan_frequency_hours", "site_id", "vertical"]
        )
        expect(brand.brand_slug).toBe("acme")
        expect(brand.brand_name).toBe("ACME")
        expect(brand.domain).toBe("acme.com")
        expect(brand.vertical).toBe("saas")
        expect(brand.scan_frequency_hours).toBe(168)
        expect(brand.site_id).toBe(brandSiteId)
        expect(typeof brand.id).toBe("number")
        expect(String(brand.added_at)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
      })

      it("gets one brand by slug", async () => {
        const response = await get("/api/public/v1/brands/acme")
        expect(response.status).toBe(200)
        expect(((await json(response)) as { site_id: string }).site_id).toBe(brandSiteId)
      })

      it("404 for an unknown slug", async () => {
        const response = await get("/api/public/v1/brands/nope")
        expect(response.status).toBe(404)
        expect(await response.text()).toBe(`{"error":"brand not found"}`)
      })

      it("400 naming the parameter for a slug outside ^[a-z0-9-]+$", async () => {
        for (const slug of ["ACME", "a_b", "a%20b", "%C3%A9"]) {
          const response = await get(`/api/public/v1/brands/${slug}`)
          expect(response.status).toBe(400)
          expect(((await json(response)) as { error: string }).error).toStartWith("invalid slug:")
        }
      })
    })

    describe("agent analytics and ingestion answer after authentication and validation", () => {
      // Agent analytics: real answers; their figures are tested in test/agents.
      const paths = [
        "/api/public/v1/brands/acme/agents",
        "/api/public/v1/brands/acme/agents/pages",
        "/api/public/v1/brands/acme/search-performance",
        "/api/public/v1/brands/acme/attribution"
      ]
      for (const path of paths) {
        it(`GET ${path}`, async () => {
          const response = await get(path)
          expect(response.status).toBe(200)
          expect(response.headers.get("content-type")).toStartWith("application/json")
          expect((await get(path, {})).status).toBe(401)
          expect((await get(path.replace("/acme/", "/nope/"))).status).toBe(404)
        })
      }
      // Ingestion is built (test/ingestion): on the free plan both endpoints answer 403.
      const ingestion: ReadonlyArray<[string, string]> = [
        ["/api/public/v1/agents/ingest", `{"error":"plan not entitled to server-log ingestion"}`],
        ["/api/public/v1/agents/ingest/drain", `{"error":"plan not entitled to log-drain ingestion: Growth plan or higher"}`]
      ]
      for (const [path, body] of ingestion) {
        it(`POST ${path} on the free plan`, async () => {
          const response = await app.fetch(`${path}?site_id=${brandSiteId}`, {
            method: "POST",
            headers: { ...bearer(key), "content-type": "application/json" },
            body: JSON.stringify({ site_id: brandSiteId, records: [] })
          })
          expect(response.status).toBe(403)
          expect(await response.text()).toBe(body)
        })
      }

      it("a bad range is a 400 naming the parameter", async () => {
        const response = await get("/api/public/v1/brands/acme/snapshots?range=1d")
        expect(response.status).toBe(400)
        expect(await response.text()).toBe(`{"error":"invalid range: must be one of 7d, 30d, 90d"}`)
      })
    })

    // The visibility reads: real answers; their figures are tested on the database back ends
    // in test/visibility/reads.test.ts (the fake back end holds no rollups: its aggregates are empty).
    describe("visibility reads answer 200 JSON after authentication, 404 for an unknown competitor", () => {
      const paths = [
        "/api/public/v1/brands/acme/snapshots",
        "/api/public/v1/brands/acme/mentions",
        "/api/public/v1/brands/acme/prompts",
        "/api/public/v1/portfolio",
        "/api/public/v1/citations",
        "/api/public/v1/citations/fanouts",
        "/api/public/v1/model",
        "/api/public/v1/topics",
        "/api/public/v1/industry/metrics",
        "/api/public/v1/industry/gap",
        "/api/public/v1/industry/ranking"
      ]
      for (const path of paths) {
        it(`GET ${path}`, async () => {
          const response = await get(path)
          expect(response.status).toBe(200)
          expect(response.headers.get("content-type")).toContain("application/json")
          expect(typeof (await json(response))).toBe("object")
          expect((await get(path, {})).status).toBe(401)
        })
      }
      for (const path of ["/api/public/v1/industry/competitors/rival/citations", "/api/public/v1/industry/competitors/rival/prompts"]) {
        it(`GET ${path} (no such competitor)`, async () => {
          const response = await get(path)
          expect(response.status).toBe(404)
          expect(await response.text()).toBe(`{"error":"competitor not found"}`)
          expect((await get(path, {})).status).toBe(401)
        })
      }
    })

    describe("unknown routes and malformed bodies", () => {
      it("404 JSON for an unknown path", async () => {
        const response = await get("/api/public/v1/nothing-here")
        expect(response.status).toBe(404)
        expect(await response.text()).toBe(`{"error":"not found"}`)
      })

      it("400 JSON for malformed JSON", async () => {
        const response = await app.fetch("/api/v1/me/api-keys", {
          method: "POST",
          headers: { cookie, "content-type": "application/json" },
          body: `{"name":`
        })
        expect(response.status).toBe(400)
        expect(await response.text()).toBe(`{"error":"invalid JSON body"}`)
      })

      it("400 JSON for a body of the wrong type", async () => {
        const response = await app.fetch("/api/v1/me/brands", {
          method: "POST",
          headers: { cookie, "content-type": "application/json" },
          body: `[1,2,3]`
        })
        expect(response.status).toBe(400)
        expect(((await json(response)) as { error: string }).error).toStartWith("invalid ")
      })
    })

    describe("OpenAPI", () => {
      it("serves the public API's document with the version label and all 23 paths", async () => {
        const response = await app.fetch("/api/public/v1/openapi.json")
        expect(response.status).toBe(200)
        const document = (await json(response)) as { openapi: string; info: { version: string }; paths: Record<string, unknown> }
        expect(document.openapi).toStartWith("3.1")
        expect(document.info.version).toBe("2026.05.23")
        const paths = Object.keys(document.paths)
        expect(paths.length).toBe(23)
        expect(paths.every((path) => path.startsWith("/api/public/v1/"))).toBe(true)
      })
    })
  })
}
