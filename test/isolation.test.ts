import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { bearer, createBrand, createKey, databaseBackends, makeTestApp, signup, type TestApp } from "./helpers/app.js"

/**
 * The cross-account matrix: account B's key against every public path, aimed at account A's
 * brand, competitor and site. Per-brand paths answer 404 as for an unknown brand; nothing of
 * A's (slug, name, domain, site id, competitor) ever appears in any answer to B.
 */
for (const backend of ["fake", ...databaseBackends()] as const) {
  describe(`cross-account isolation on ${backend}`, () => {
    let app: TestApp
    let keyB: string
    let siteA: string
    const secretsOfA = () => ["acme-secret-brand", "Acme Secret Brand", "acme-secret.example", "Globex Hidden", siteA]

    beforeAll(async () => {
      app = await makeTestApp(backend)
      const cookieA = await signup(app, "a@isolation.test")
      const brandA = await createBrand(app, cookieA, "acme-secret-brand", {
        brand_name: "Acme Secret Brand",
        domain: "acme-secret.example"
      })
      siteA = brandA.site_id
      await app.fetch("/api/v1/me/brands/acme-secret-brand/competitors", {
        method: "POST",
        headers: { "content-type": "application/json", cookie: cookieA },
        body: JSON.stringify({ name: "Globex Hidden", domain: "globex-hidden.example" })
      })
      await createKey(app, cookieA)
      const cookieB = await signup(app, "b@isolation.test")
      await createBrand(app, cookieB, "bravo")
      keyB = (await createKey(app, cookieB)).key
    }, 30_000) // a PGlite cold start on a loaded machine can pass bun's 5 s hook default
    afterAll(() => app.dispose())

    const perBrand = [
      "",
      "/snapshots",
      "/snapshots?range=7d",
      "/mentions",
      "/prompts",
      "/agents",
      "/agents/pages",
      "/search-performance",
      "/attribution"
    ]
    for (const suffix of perBrand) {
      it(`GET /brands/{A's slug}${suffix} is 404 brand not found`, async () => {
        const response = await app.fetch(`/api/public/v1/brands/acme-secret-brand${suffix}`, { headers: bearer(keyB) })
        expect(response.status).toBe(404)
        expect(await response.text()).toBe(`{"error":"brand not found"}`)
      })
    }

    // Agent analytics: B's own brand answers 200 with nothing of A's (A's traffic: test/agents).
    for (const suffix of ["/agents", "/agents/pages", "/search-performance", "/attribution"]) {
      it(`GET /brands/{B's slug}${suffix} is 200 and shows nothing of A's`, async () => {
        const response = await app.fetch(`/api/public/v1/brands/bravo${suffix}?range=90d`, { headers: bearer(keyB) })
        expect(response.status).toBe(200)
        const text = await response.text()
        for (const secret of secretsOfA()) expect(text).not.toContain(secret)
      })
    }

    const workspace = [
      "/api/public/v1/brands",
      "/api/public/v1/portfolio",
      "/api/public/v1/citations",
      "/api/public/v1/citations/fanouts",
      "/api/public/v1/model",
      "/api/public/v1/model?brand=acme-secret-brand",
      "/api/public/v1/topics",
      "/api/public/v1/industry/metrics",
      "/api/public/v1/industry/metrics?brand=acme-secret-brand",
      "/api/public/v1/industry/competitors/Globex%20Hidden/citations",
      "/api/public/v1/industry/competitors/Globex%20Hidden/prompts",
      "/api/public/v1/industry/gap",
      "/api/public/v1/industry/ranking"
    ]
    for (const path of workspace) {
      it(`GET ${path} shows nothing of A's`, async () => {
        const response = await app.fetch(path, { headers: bearer(keyB) })
        // Visibility reads answer B's own data: 200, or 404 for A's brand or competitor.
        const expected = /acme-secret-brand|Globex/.test(path) ? [404] : path.startsWith("/api/public/v1/brands") ||
            /portfolio|citations|model|topics|industry/.test(path) ? [200] : [200, 404, 501]
        expect(expected).toContain(response.status)
        const text = await response.text()
        for (const secret of secretsOfA()) expect(text).not.toContain(secret)
      })
    }

    for (const path of ["/api/public/v1/agents/ingest", `/api/public/v1/agents/ingest/drain`]) {
      it(`POST ${path} with A's site_id stores nothing for B and shows nothing of A's`, async () => {
        const response = await app.fetch(`${path}?site_id=${siteA}`, {
          method: "POST",
          headers: { ...bearer(keyB), "content-type": "application/json" },
          body: JSON.stringify({ site_id: siteA, records: [{ ua: "GPTBot/1.2", path: "/" }] })
        })
        expect(response.status).toBeGreaterThanOrEqual(400)
        expect(response.status).not.toBe(500)
        const text = await response.text()
        for (const secret of secretsOfA().slice(0, 4)) expect(text).not.toContain(secret)
      })
    }
  })
}
