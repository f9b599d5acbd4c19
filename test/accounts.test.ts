import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { AccountsRepo } from "../src/accounts/Repo.js"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type Backend, type TestApp } from "./helpers/app.js"

const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

const post = (app: TestApp, path: string, body: unknown, headers: Record<string, string> = {}) =>
  app.fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

const setPlan = (app: TestApp, email: string, plan: string) =>
  app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail(email, plan)))

for (const backend of backends) {
  describe(`accounts and sessions on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    })
    afterAll(() => app.dispose())

    it("signup answers 201 with account and user, on the free plan, and a session cookie", async () => {
      const response = await post(app, "/api/v1/auth/signup", {
        email: "Founder@Example.test",
        password: "long enough password",
        account_name: "Founders"
      })
      expect(response.status).toBe(201)
      const body = (await json(response)) as { account: { id: number; name: string; plan: string }; user: { email: string } }
      expect(body.account.name).toBe("Founders")
      expect(body.account.plan).toBe("free")
      expect(typeof body.account.id).toBe("number")
      expect(body.user.email).toBe("founder@example.test")
      const cookie = response.headers.get("set-cookie") ?? ""
      expect(cookie).toStartWith("aiv_session=")
      expect(cookie).toContain("HttpOnly")
      expect(cookie).toContain("SameSite=Lax")
      expect(cookie).toContain("Path=/")
    })

    it("409 for an email already taken (any case)", async () => {
      const response = await post(app, "/api/v1/auth/signup", {
        email: "FOUNDER@example.test",
        password: "long enough password",
        account_name: "Again"
      })
      expect(response.status).toBe(409)
      expect(((await json(response)) as { error: string }).error).toBe("email already registered")
    })

    it("400 for a password under 10 characters, a bad email, missing fields", async () => {
      const short = await post(app, "/api/v1/auth/signup", { email: "x@example.test", password: "123456789", account_name: "X" })
      expect(short.status).toBe(400)
      expect(await short.text()).toBe(`{"error":"password must be at least 10 characters"}`)
      const badEmail = await post(app, "/api/v1/auth/signup", { email: "nope", password: "0123456789", account_name: "X" })
      expect(badEmail.status).toBe(400)
      expect(await badEmail.text()).toBe(`{"error":"invalid email"}`)
      const missing = await post(app, "/api/v1/auth/signup", { email: "y@example.test" })
      expect(missing.status).toBe(400)
      expect(((await json(missing)) as { error: string }).error).toStartWith("invalid password:")
    })

    it("login: 200 and a cookie for the right password, 401 invalid credentials otherwise", async () => {
      const ok = await post(app, "/api/v1/auth/login", { email: "founder@example.test", password: "long enough password" })
      expect(ok.status).toBe(200)
      expect(ok.headers.get("set-cookie")).toStartWith("aiv_session=")
      const wrong = await post(app, "/api/v1/auth/login", { email: "founder@example.test", password: "wrong password!" })
      expect(wrong.status).toBe(401)
      expect(await wrong.text()).toBe(`{"error":"invalid credentials"}`)
      const unknown = await post(app, "/api/v1/auth/login", { email: "ghost@example.test", password: "long enough password" })
      expect(unknown.status).toBe(401)
      expect(await unknown.text()).toBe(`{"error":"invalid credentials"}`)
    })

    it("GET /me shows account, user, plan entitlements and usage; logout ends the session server-side", async () => {
      const cookie = await signup(app, "me@example.test")
      const me = await app.fetch("/api/v1/me", { headers: { cookie } })
      expect(me.status).toBe(200)
      const body = (await json(me)) as Record<string, any>
      expect(body.user).toEqual({ email: "me@example.test" })
      expect(body.plan).toEqual({
        id: "free",
        paid: false,
        max_api_keys: 1,
        max_brands: 1,
        max_prompts: 10,
        batch_ingest: false,
        drain_ingest: false,
        monthly_events: 0,
        scan_frequency_hours: 168
      })
      expect(body.usage.brands).toBe(0)
      expect(body.usage.active_api_keys).toBe(0)

      const logout = await app.fetch("/api/v1/auth/logout", { method: "POST", headers: { cookie } })
      expect(logout.status).toBe(204)
      expect(logout.headers.get("set-cookie")).toContain("Max-Age=0")
      const after = await app.fetch("/api/v1/me", { headers: { cookie } })
      expect(after.status).toBe(401)
      expect(await after.text()).toBe(`{"error":"not signed in"}`)
    })

    it("the dashboard refuses a state-changing request from a foreign Origin", async () => {
      const cookie = await signup(app, "csrf@example.test")
      const foreign = await post(app, "/api/v1/me/api-keys", { name: "x" }, { cookie, origin: "https://evil.example" })
      expect(foreign.status).toBe(403)
      expect(await foreign.text()).toBe(`{"error":"foreign origin"}`)
      const same = await post(app, "/api/v1/me/api-keys", { name: "x" }, { cookie, origin: "http://localhost" })
      expect(same.status).toBe(201)
    })
  })

  describe(`API keys on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    beforeAll(async () => {
      app = await makeTestApp(backend)
      cookie = await signup(app, "keys@example.test")
    })
    afterAll(() => app.dispose())

    it("400 name required for an empty, blank or missing name; nothing is created", async () => {
      for (const body of [{ name: "" }, { name: "   " }, {}, { name: null }]) {
        const response = await post(app, "/api/v1/me/api-keys", body, { cookie })
        expect(response.status).toBe(400)
        expect(await response.text()).toBe(`{"error":"name required"}`)
      }
      const list = (await json(await app.fetch("/api/v1/me/api-keys", { headers: { cookie } }))) as { count: number }
      expect(list.count).toBe(0)
    })

    let first: { id: string; key: string; prefix: string; name: string; created_at: string }
    it("creates a key: aivkey_ + 43 URL-safe characters, shown once, name trimmed to 80", async () => {
      const longName = `  ${"n".repeat(100)}  `
      const response = await post(app, "/api/v1/me/api-keys", { name: longName }, { cookie })
      expect(response.status).toBe(201)
      first = (await json(response)) as typeof first
      expect(Object.keys(first).sort()).toEqual(["created_at", "id", "key", "name", "prefix"])
      expect(first.key).toMatch(/^aivkey_[A-Za-z0-9_-]{43}$/)
      expect(first.name).toBe("n".repeat(80))
      expect(first.prefix).toBe(first.key.slice(0, 14) + "\u2026")
    })

    it("402 at the plan's key cap, byte-exact, and nothing is created", async () => {
      const response = await post(app, "/api/v1/me/api-keys", { name: "second" }, { cookie })
      expect(response.status).toBe(402)
      expect(await response.text()).toBe(
        `{"error":"plan_limit_reached","plan":"free","count":1,"limit":1,"hint":"The free plan allows 1 active API key. Revoke a key you no longer use, or upgrade your plan."}`
      )
      const list = (await json(await app.fetch("/api/v1/me/api-keys", { headers: { cookie } }))) as { count: number }
      expect(list.count).toBe(1)
    })

    it("a plan change applies to the key cap at once", async () => {
      await setPlan(app, "keys@example.test", "starter")
      const response = await post(app, "/api/v1/me/api-keys", { name: "second" }, { cookie })
      expect(response.status).toBe(201)
      await setPlan(app, "keys@example.test", "free")
      const third = await post(app, "/api/v1/me/api-keys", { name: "third" }, { cookie })
      expect(third.status).toBe(402)
      expect(((await json(third)) as { count: number; limit: number }).count).toBe(2)
    })

    it("the key works, and the list shows its last use without the key itself", async () => {
      const use = await app.fetch("/api/public/v1/brands", { headers: bearer(first.key) })
      expect(use.status).toBe(200)
      const response = await app.fetch("/api/v1/me/api-keys", { headers: { cookie } })
      const list = (await json(response)) as { keys: Array<Record<string, unknown>>; count: number; limit: number }
      expect(list.limit).toBe(1)
      expect(list.count).toBe(2)
      const row = list.keys.find((k) => k.id === first.id)!
      expect(Object.keys(row).sort()).toEqual(["created_at", "id", "last_used_at", "name", "prefix", "revoked_at"])
      expect(row.prefix).toBe(first.prefix)
      expect(row.last_used_at).not.toBeNull()
      expect(row.revoked_at).toBeNull()
      expect(JSON.stringify(list)).not.toContain(first.key)
    })

    it("revoke: 200 with revoked_at; the next request is 401 invalid API key; the key stays listed", async () => {
      const response = await app.fetch(`/api/v1/me/api-keys/${first.id}/revoke`, { method: "POST", headers: { cookie } })
      expect(response.status).toBe(200)
      const record = (await json(response)) as { id: string; revoked_at: string | null }
      expect(record.id).toBe(first.id)
      expect(record.revoked_at).not.toBeNull()

      const next = await app.fetch("/api/public/v1/brands", { headers: bearer(first.key) })
      expect(next.status).toBe(401)
      expect(await next.text()).toBe(`{"error":"invalid API key"}`)

      const list = (await json(await app.fetch("/api/v1/me/api-keys", { headers: { cookie } }))) as {
        keys: Array<{ id: string; revoked_at: string | null }>
      }
      expect(list.keys.find((k) => k.id === first.id)?.revoked_at).toBe(record.revoked_at)

      // Revoking twice keeps the first date.
      const again = (await json(
        await app.fetch(`/api/v1/me/api-keys/${first.id}/revoke`, { method: "POST", headers: { cookie } })
      )) as { revoked_at: string }
      expect(again.revoked_at).toBe(record.revoked_at!)
    })

    it("revoke of an unknown id is 404, of a malformed id 400, of another account's key 404", async () => {
      const unknown = await app.fetch(`/api/v1/me/api-keys/00000000-0000-4000-8000-000000000000/revoke`, {
        method: "POST",
        headers: { cookie }
      })
      expect(unknown.status).toBe(404)
      expect(await unknown.text()).toBe(`{"error":"api key not found"}`)
      const malformed = await app.fetch(`/api/v1/me/api-keys/not-a-uuid/revoke`, { method: "POST", headers: { cookie } })
      expect(malformed.status).toBe(400)

      const otherCookie = await signup(app, "other-keys@example.test")
      const other = await createKey(app, otherCookie)
      const cross = await app.fetch(`/api/v1/me/api-keys/${other.id}/revoke`, { method: "POST", headers: { cookie } })
      expect(cross.status).toBe(404)
      expect((await app.fetch("/api/public/v1/brands", { headers: bearer(other.key) })).status).toBe(200)
    })

    it("key management needs a session", async () => {
      expect((await app.fetch("/api/v1/me/api-keys")).status).toBe(401)
      expect((await post(app, "/api/v1/me/api-keys", { name: "x" })).status).toBe(401)
    })
  })

  describe(`dashboard brands on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    beforeAll(async () => {
      app = await makeTestApp(backend)
      cookie = await signup(app, "brands@example.test")
    })
    afterAll(() => app.dispose())

    it("creates a brand with a fresh site_id; 402 at the plan's brand cap; 409 for a duplicate slug", async () => {
      const brand = await createBrand(app, cookie, "acme", { domain: "https://www.ACME.com/pricing" })
      expect(brand.site_id).toMatch(/^[0-9a-f-]{36}$/)
      const capped = await post(app, "/api/v1/me/brands", { brand_slug: "beta", brand_name: "Beta", domain: "beta.com", vertical: "retail" }, { cookie })
      expect(capped.status).toBe(402)
      expect(((await json(capped)) as { error: string; limit: number }).limit).toBe(1)
      await setPlan(app, "brands@example.test", "starter")
      const duplicate = await post(app, "/api/v1/me/brands", { brand_slug: "acme", brand_name: "Acme 2", domain: "acme2.com", vertical: "saas" }, { cookie })
      expect(duplicate.status).toBe(409)
      const list = (await json(await app.fetch("/api/v1/me/brands", { headers: { cookie } }))) as { brands: Array<{ domain: string }> }
      expect(list.brands.map((b) => b.domain)).toEqual(["acme.com"])
    })

    it("400 for a bad vertical, slug or domain (invalid url)", async () => {
      const vertical = await post(app, "/api/v1/me/brands", { brand_slug: "x", brand_name: "X", domain: "x.com", vertical: "space" }, { cookie })
      expect(vertical.status).toBe(400)
      expect(await vertical.text()).toBe(`{"error":"invalid vertical: must be one of saas, retail, finance, healthcare, other"}`)
      const slug = await post(app, "/api/v1/me/brands", { brand_slug: "X Y", brand_name: "X", domain: "x.com", vertical: "saas" }, { cookie })
      expect(slug.status).toBe(400)
      expect(((await json(slug)) as { error: string }).error).toStartWith("invalid brand_slug:")
      const domain = await post(app, "/api/v1/me/brands", { brand_slug: "x", brand_name: "X", domain: "not a host", vertical: "saas" }, { cookie })
      expect(domain.status).toBe(400)
      expect(await domain.text()).toBe(`{"error":"invalid url"}`)
    })

    it("adds competitors (409 on a duplicate name in any case) and prompts, and saves a drain secret", async () => {
      const competitor = await post(app, "/api/v1/me/brands/acme/competitors", { name: "Globex", domain: "globex.com", aliases: ["Globex Corp"], pinned: true }, { cookie })
      expect(competitor.status).toBe(201)
      expect(await json(competitor)).toMatchObject({ name: "Globex", domain: "globex.com", aliases: ["Globex Corp"], pinned: true })
      const duplicate = await post(app, "/api/v1/me/brands/acme/competitors", { name: "GLOBEX", domain: "globex.com" }, { cookie })
      expect(duplicate.status).toBe(409)

      const prompt = await post(app, "/api/v1/me/brands/acme/prompts", { prompt: "best crm for startups", topic: "crm", intent: "commercial" }, { cookie })
      expect(prompt.status).toBe(201)
      expect(await json(prompt)).toMatchObject({ prompt: "best crm for startups", topic: "crm", intent: "commercial", source: "manual", source_query: "" })
      const badIntent = await post(app, "/api/v1/me/brands/acme/prompts", { prompt: "x", intent: "curious" }, { cookie })
      expect(badIntent.status).toBe(400)

      const secret = await app.fetch("/api/v1/me/brands/acme/drain-secret", {
        method: "PUT",
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify({ secret: "s3cret" })
      })
      expect(secret.status).toBe(204)
      const unknownBrand = await post(app, "/api/v1/me/brands/nope/competitors", { name: "A", domain: "a.com" }, { cookie })
      expect(unknownBrand.status).toBe(404)
    })

    it("402 at the plan's monitored-prompt cap (over all brands of the account)", async () => {
      await setPlan(app, "brands@example.test", "free")
      for (let i = 1; i < 10; i++) {
        const response = await post(app, "/api/v1/me/brands/acme/prompts", { prompt: `prompt ${i}` }, { cookie })
        expect(response.status).toBe(201)
      }
      const capped = await post(app, "/api/v1/me/brands/acme/prompts", { prompt: "one too many" }, { cookie })
      expect(capped.status).toBe(402)
      expect(await json(capped)).toMatchObject({ error: "plan_limit_reached", plan: "free", count: 10, limit: 10 })
    })
  })
}
