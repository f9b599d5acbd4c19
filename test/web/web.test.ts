import { FetchHttpClient } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect, Either, Layer } from "effect"
import { makeClient } from "../../src/client.js"
import { TWINS } from "../../src/web/Twins.js"
import { bearer, createBrand, createKey, makeTestApp, signup, type TestApp } from "../helpers/app.js"

/** The web application's server side, in process: static files, the reference page, the dashboard twins. */
describe("web application (server side)", () => {
  let app: TestApp
  let cookie: string
  let otherCookie: string
  let key: string

  beforeAll(async () => {
    app = await makeTestApp("fake")
    cookie = await signup(app, "web@example.test")
    otherCookie = await signup(app, "other@example.test")
    await createBrand(app, cookie, "acme")
    await createBrand(app, otherCookie, "theirs")
    key = (await createKey(app, cookie)).key
  }, 30_000)
  afterAll(() => app.dispose())

  it("serves the page with a strict Content-Security-Policy and no inline script", async () => {
    const response = await app.fetch("/")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/html")
    const csp = response.headers.get("content-security-policy")!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain("unsafe-inline")
    const html = await response.text()
    expect(html).toContain(`<script type="module" src="/assets/app.js"></script>`)
    expect(html).not.toMatch(/<script>|<style>|https?:\/\//)
  })

  it("serves the bundled script and styles from this origin (Chart.js included, no CDN)", async () => {
    const js = await app.fetch("/assets/app.js")
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toContain("text/javascript")
    const code = await js.text()
    expect(code.length).toBeGreaterThan(50_000)
    expect(code).not.toMatch(/cdn\.jsdelivr|unpkg\.com|cdnjs/)
    expect(code).not.toContain("localStorage")
    const css = await app.fetch("/assets/app.css")
    expect(css.headers.get("content-type")).toContain("text/css")
  })

  it("serves an API reference rendered from the OpenAPI document, offline", async () => {
    const response = await app.fetch("/api/public/v1/docs")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
    const html = await response.text()
    const spec = (await (await app.fetch("/api/public/v1/openapi.json")).json()) as { paths: Record<string, unknown> }
    for (const path of Object.keys(spec.paths)) expect(html).toContain(`<code>${path}</code>`)
    expect(html).toContain("AgentPagesResponse")
    expect(html).not.toMatch(/<script|src="https?:|href="https?:/)
  })

  it("answers each dashboard twin exactly as its public endpoint answers the same account's key", async () => {
    for (const { target, twin } of TWINS) {
      const { params, path } = target("acme")
      const query = new URLSearchParams({ range: "7d", ...params }).toString()
      const viaTwin = await app.fetch(`/api/v1/me/brands/acme/${twin}?range=7d`, { headers: { cookie } })
      const viaKey = await app.fetch(`/api/public/v1${path}?${query}`, { headers: bearer(key) })
      expect({ twin, status: viaTwin.status }).toEqual({ twin, status: viaKey.status })
      expect(await viaTwin.text()).toBe(await viaKey.text())
    }
  })

  it("answers each account-wide twin exactly as its public endpoint, and needs a session", async () => {
    const added = await app.fetch("/api/v1/me/brands/acme/competitors", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ name: "Rival Co", domain: "rival.example" })
    })
    expect(added.status).toBe(201)
    const accountTwins = [
      "/portfolio",
      "/citations",
      "/citations/fanouts",
      "/topics",
      "/industry/ranking",
      "/industry/gap",
      "/industry/competitors/:name/citations",
      "/industry/competitors/:name/prompts"
    ]
    for (const twin of accountTwins) {
      const path = twin.replace(":name", "Rival%20Co")
      const viaTwin = await app.fetch(`/api/v1/me${path}?range=7d`, { headers: { cookie } })
      const viaKey = await app.fetch(`/api/public/v1${path}?range=7d`, { headers: bearer(key) })
      expect({ path, status: viaTwin.status }).toEqual({ path, status: viaKey.status })
      expect(await viaTwin.text()).toBe(await viaKey.text())
      // A competitor's name with a space reaches the public endpoint as that name.
      if (twin.includes(":name")) expect(viaTwin.status).toBe(200)
      const anonymous = await app.fetch(`/api/v1/me${path}`)
      expect({ path, status: anonymous.status }).toEqual({ path, status: 401 })
    }
    // The other account sees its own workspace, not this one's brand.
    const mine = (await (await app.fetch("/api/v1/me/portfolio", { headers: { cookie } })).json()) as { brands: Array<{ slug: string }> }
    const theirs = (await (await app.fetch("/api/v1/me/portfolio", { headers: { cookie: otherCookie } })).json()) as { brands: Array<{ slug: string }> }
    expect(mine.brands.map((b) => b.slug)).toEqual(["acme"])
    expect(theirs.brands.map((b) => b.slug)).toEqual(["theirs"])
    const invalid = await app.fetch("/api/v1/me/citations?range=8d", { headers: { cookie } })
    expect(invalid.status).toBe(400)
    // The brand and topic selectors pass through to the public endpoint, 404 included.
    for (const path of ["/industry/gap?brand=acme&topic=general", "/industry/ranking?brand=acme", "/citations?brand=acme", "/industry/gap?brand=nope", "/citations?brand=nope"]) {
      const viaTwin = await app.fetch(`/api/v1/me${path}`, { headers: { cookie } })
      const viaKey = await app.fetch(`/api/public/v1${path}`, { headers: bearer(key) })
      expect({ path, status: viaTwin.status }).toEqual({ path, status: path.includes("nope") ? 404 : 200 })
      expect(await viaTwin.text()).toBe(await viaKey.text())
    }
  })

  it("validates twin parameters with the public schemas", async () => {
    const response = await app.fetch("/api/v1/me/brands/acme/agents/pages?range=8d", { headers: { cookie } })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: "invalid range: must be one of 7d, 30d, 90d" })
    const slug = await app.fetch("/api/v1/me/brands/Not_A_Slug/agents", { headers: { cookie } })
    expect(slug.status).toBe(400)
  })

  it("scopes twins to the session's account and needs a session", async () => {
    const foreign = await app.fetch("/api/v1/me/brands/theirs/agents", { headers: { cookie } })
    expect(foreign.status).toBe(404)
    expect(await foreign.json()).toEqual({ error: "brand not found" })
    const anonymous = await app.fetch("/api/v1/me/brands/acme/agents")
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toEqual({ error: "not signed in" })
    // An API key is not a session: the dashboard surface refuses it.
    const withKey = await app.fetch("/api/v1/me/brands/acme/agents", { headers: bearer(key) })
    expect(withKey.status).toBe(401)
    // And a session cookie is not a key on the public surface, twins or not.
    const publicWithCookie = await app.fetch("/api/public/v1/brands/acme/agents", { headers: { cookie } })
    expect(publicWithCookie.status).toBe(401)
    expect(await publicWithCookie.json()).toEqual({ error: "missing Authorization header" })
  })

  it("keeps the Origin check on the cookie surface", async () => {
    const response = await app.fetch("/api/v1/me/api-keys", {
      method: "POST",
      headers: { cookie, origin: "https://evil.example", "content-type": "application/json" },
      body: JSON.stringify({ name: "csrf" })
    })
    expect(response.status).toBe(403)
    expect(await response.json()).toEqual({ error: "foreign origin" })
  })

  it("publishes the typed client as a module: makeClient(baseUrl, key)", async () => {
    const inProcessFetch = Layer.succeed(FetchHttpClient.Fetch, ((input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input.toString())
      return app.fetch(url.pathname + url.search, init)
    }) as typeof fetch)
    const run = <A, E>(token: string, f: (client: Effect.Effect.Success<ReturnType<typeof makeClient>>) => Effect.Effect<A, E>) =>
      Effect.runPromise(
        makeClient("http://localhost", token).pipe(
          Effect.flatMap(f),
          Effect.provide(FetchHttpClient.layer),
          Effect.provide(inProcessFetch)
        )
      )
    const list = await run(key, (client) => client.brands.list())
    expect(list.brands.map((brand) => brand.brand_slug)).toEqual(["acme"])
    const refused = await run("aivkey_wrong", (client) => Effect.either(client.brands.list()))
    expect(Either.isLeft(refused) && refused.left._tag).toBe("Unauthorized")
  })
})
