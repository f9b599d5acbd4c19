import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { ObservationsRepo } from "../../src/observations/Repo.js"
import {
  bearer,
  createBrand,
  createKey,
  databaseBackends,
  json,
  makeTestApp,
  serverSchemaUrl,
  signup,
  type Backend,
  type TestApp
} from "../helpers/app.js"
import { limitRules } from "../helpers/limits.js"

/**
 * Accounts and sessions under attack, through the real app: one canonical email for the sign-in
 * limit, the look-up and sign-up; a password change and "sign out everywhere"; a plan downgrade that
 * stops what is above the new plan's caps (keys 403, brands not scanned) without deleting anything.
 */

const limits = limitRules

const post = (app: TestApp, path: string, body: unknown, headers: Record<string, string> = {}) =>
  app.fetch(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })

const login = (app: TestApp, email: string, password: string) => post(app, "/api/v1/auth/login", { email, password })

const cookieOf = (response: Response) => (response.headers.get("set-cookie") ?? "").split(";")[0]!

const setPlan = (app: TestApp, email: string, plan: string) =>
  app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail(email, plan)))

const PASSWORD = "correct horse battery"
const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

for (const backend of backends) {
  describe(`one canonical email on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend, {
        config: { rateLimits: limits({ authEmail: { limit: 3, windowSeconds: 300 }, authIp: { limit: 1000, windowSeconds: 300 } }) }
      })
    })
    afterAll(() => app.dispose())

    it("the U+0130 spelling (and the full-width one) shares the per-email sign-in limit of the plain spelling", async () => {
      // Sign-up takes the first token of the address's bucket, two wrong passwords the others.
      await signup(app, "victim@example.test")
      expect((await login(app, "victim@example.test", "wrong password!")).status).toBe(401)
      expect((await login(app, "Victim@Example.test", "wrong password!")).status).toBe(401)
      for (const spelling of ["v\u0130ctim@example.test", "v\u0131ctim@example.test", "\uff56\uff49\uff43\uff54\uff49\uff4d@example.test", "vic\u00adtim@example.test"]) {
        const refused = await login(app, spelling, PASSWORD)
        expect(refused.status).toBe(429)
        expect(await refused.text()).toBe(`{"error":"rate limit exceeded"}`)
      }
    })

    it("every spelling reaches the one account: sign-in with the U+0130 spelling works, a sign-up with it is 409", async () => {
      await signup(app, "ivan@example.test")
      const signedIn = await login(app, "\u0130van@example.test", PASSWORD)
      expect(signedIn.status).toBe(200)
      expect(((await json(signedIn)) as { user: { email: string } }).user.email).toBe("ivan@example.test")
      const again = await post(app, "/api/v1/auth/signup", { email: "\uff29VAN@example.test", password: PASSWORD, account_name: "Twin" })
      expect(again.status).toBe(409)
    })
  })

  describe(`password change and sign out everywhere on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    })
    afterAll(() => app.dispose())

    const me = (cookie: string) => app.fetch("/api/v1/me", { headers: { cookie } })
    const changePassword = (cookie: string, body: unknown, headers: Record<string, string> = {}) =>
      post(app, "/api/v1/me/password", body, { cookie, ...headers })

    it("needs the current password, ends every other session, renews this one; the old password stops working", async () => {
      const email = "change@example.test"
      const first = await signup(app, email)
      const second = cookieOf(await login(app, email, PASSWORD))
      const third = cookieOf(await login(app, email, PASSWORD))

      const wrong = await changePassword(second, { current_password: "not the password", new_password: "a brand new password" })
      expect(wrong.status).toBe(400)
      expect(await wrong.text()).toBe(`{"error":"current password is not right"}`)
      const short = await changePassword(second, { current_password: PASSWORD, new_password: "short" })
      expect(short.status).toBe(400)
      expect(await short.text()).toBe(`{"error":"new password must be at least 10 characters"}`)
      // Nothing changed: every session still works.
      for (const cookie of [first, second, third]) expect((await me(cookie)).status).toBe(200)

      const changed = await changePassword(second, { current_password: PASSWORD, new_password: "a brand new password" })
      expect(changed.status).toBe(204)
      const renewed = cookieOf(changed)
      expect(renewed).toStartWith("aiv_session=")
      expect(renewed).not.toBe(second)
      expect(changed.headers.get("set-cookie")).toContain("HttpOnly")
      for (const cookie of [first, second, third]) {
        const ended = await me(cookie)
        expect(ended.status).toBe(401)
        expect(await ended.text()).toBe(`{"error":"not signed in"}`)
      }
      expect((await me(renewed)).status).toBe(200)
      expect((await login(app, email, PASSWORD)).status).toBe(401)
      expect((await login(app, email, "a brand new password")).status).toBe(200)
    })

    it("needs a session and passes the CSRF guard of the cookie surface", async () => {
      const cookie = await signup(app, "csrf-change@example.test")
      const body = { current_password: PASSWORD, new_password: "a brand new password" }
      expect((await post(app, "/api/v1/me/password", body)).status).toBe(401)
      const foreign = await changePassword(cookie, body, { origin: "https://evil.example" })
      expect(foreign.status).toBe(403)
      expect(await foreign.text()).toBe(`{"error":"foreign origin"}`)
      const form = await app.fetch("/api/v1/me/password", {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: "current_password=x&new_password=y"
      })
      expect(form.status).toBe(415)
      const everywhere = await app.fetch("/api/v1/me/sign-out-everywhere", { method: "POST", headers: { cookie, origin: "https://evil.example" } })
      expect(everywhere.status).toBe(403)
      expect((await me(cookie)).status).toBe(200)
    })

    it("sign out everywhere ends every session of the user, this one included, and clears the cookie", async () => {
      const email = "everywhere@example.test"
      const first = await signup(app, email)
      const second = cookieOf(await login(app, email, PASSWORD))
      const other = await signup(app, "bystander@example.test")
      const out = await app.fetch("/api/v1/me/sign-out-everywhere", { method: "POST", headers: { cookie: second } })
      expect(out.status).toBe(204)
      expect(out.headers.get("set-cookie")).toContain("Max-Age=0")
      for (const cookie of [first, second]) expect((await me(cookie)).status).toBe(401)
      // Another user's session is untouched; the user can sign in again.
      expect((await me(other)).status).toBe(200)
      expect((await login(app, email, PASSWORD)).status).toBe(200)
      expect((await app.fetch("/api/v1/me/sign-out-everywhere", { method: "POST" })).status).toBe(401)
    })
  })

  describe(`password change is rate limited like sign-in on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend, {
        config: { rateLimits: limits({ authEmail: { limit: 3, windowSeconds: 300 }, authIp: { limit: 1000, windowSeconds: 300 } }) }
      })
    })
    afterAll(() => app.dispose())

    it("guesses of the current password take tokens from the email's sign-in bucket; 429 with Retry-After beyond it", async () => {
      const cookie = await signup(app, "guess@example.test")
      const guess = () =>
        post(app, "/api/v1/me/password", { current_password: "a guess at it", new_password: "a brand new password" }, { cookie })
      expect((await guess()).status).toBe(400)
      expect((await guess()).status).toBe(400)
      const refused = await guess()
      expect(refused.status).toBe(429)
      expect(await refused.text()).toBe(`{"error":"rate limit exceeded"}`)
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      // The same bucket as sign-in: the right password is refused too, here and at the login.
      expect((await post(app, "/api/v1/me/password", { current_password: PASSWORD, new_password: "a brand new password" }, { cookie })).status).toBe(429)
      expect((await login(app, "GUESS@example.test", PASSWORD)).status).toBe(429)
    })
  })
}

/** The keys of an account, oldest first (the list's order: created_at, then id). */
const keyIds = async (app: TestApp, cookie: string) =>
  ((await json(await app.fetch("/api/v1/me/api-keys", { headers: { cookie } }))) as { keys: Array<{ id: string; revoked_at: string | null }> }).keys

const statusOf = (app: TestApp, key: string) => app.fetch("/api/public/v1/brands", { headers: bearer(key) }).then((r) => r.status)

/** Polls until `app` answers `want` for every key (a notification crosses processes in milliseconds). */
const settle = async (app: TestApp, keys: ReadonlyArray<string>, want: ReadonlyArray<number>) => {
  let got: Array<number> = []
  for (let i = 0; i < 100; i++) {
    got = await Promise.all(keys.map((key) => statusOf(app, key)))
    if (got.every((status, index) => status === want[index])) break
    await Bun.sleep(10)
  }
  return got
}

for (const backend of databaseBackends()) {
  describe(`a plan downgrade on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    })
    afterAll(() => app.dispose())

    it("the oldest keys up to the new cap keep working, the others answer 403 naming the plan, until they fit", async () => {
      const email = "downgrade@example.test"
      const cookie = await signup(app, email)
      await setPlan(app, email, "growth")
      const created: Array<{ id: string; key: string }> = []
      for (let i = 0; i < 6; i++) created.push(await createKey(app, cookie, `key ${i}`))
      const byAge = (await keyIds(app, cookie)).map((row) => created.find((key) => key.id === row.id)!)
      const keys = byAge.map((key) => key.key)
      // Every key is used (and cached) on the growth plan.
      expect(await Promise.all(keys.map((key) => statusOf(app, key)))).toEqual([200, 200, 200, 200, 200, 200])

      await setPlan(app, email, "free")
      expect(await settle(app, keys, [200, 403, 403, 403, 403, 403])).toEqual([200, 403, 403, 403, 403, 403])
      const refused = await app.fetch("/api/public/v1/brands/anything", { headers: bearer(keys[1]!) })
      expect(refused.status).toBe(403)
      expect(await refused.text()).toBe(
        `{"error":"API key over the free plan's limit of 1 active API key: only the oldest keys up to the limit work. Revoke keys to fit, or upgrade the plan."}`
      )
      // The MCP server's key check is the same one.
      const mcp = await post(app, "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...bearer(keys[1]!), accept: "application/json, text/event-stream" })
      expect(mcp.status).toBe(403)
      expect((await post(app, "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...bearer(keys[0]!), accept: "application/json, text/event-stream" })).status).toBe(200)

      // Revoking the oldest makes room for the next one.
      const revoked = await app.fetch(`/api/v1/me/api-keys/${byAge[0]!.id}/revoke`, { method: "POST", headers: { cookie } })
      expect(revoked.status).toBe(200)
      expect(await settle(app, keys, [401, 200, 403, 403, 403, 403])).toEqual([401, 200, 403, 403, 403, 403])

      // A partial upgrade lets the oldest three active keys work; a full one all of them.
      await setPlan(app, email, "starter")
      expect(await settle(app, keys, [401, 200, 200, 200, 403, 403])).toEqual([401, 200, 200, 200, 403, 403])
      await setPlan(app, email, "growth")
      expect(await settle(app, keys, [401, 200, 200, 200, 200, 200])).toEqual([401, 200, 200, 200, 200, 200])

      // Nothing was deleted, and the key list says what the plan allows.
      const list = (await json(await app.fetch("/api/v1/me/api-keys", { headers: { cookie } }))) as { count: number; limit: number }
      expect(list.count).toBe(6)
    })

    it("brands above the new cap stay readable and are not scanned; the oldest up to the cap are, the others once they fit", async () => {
      const email = "brands-downgrade@example.test"
      const cookie = await signup(app, email)
      await setPlan(app, email, "growth")
      const { key } = await createKey(app, cookie)
      for (const slug of ["first", "second", "third"]) await createBrand(app, cookie, slug)
      await setPlan(app, email, "free")

      for (const slug of ["first", "second", "third"]) {
        expect((await app.fetch(`/api/public/v1/brands/${slug}`, { headers: bearer(key) })).status).toBe(200)
      }
      const listed = (await json(await app.fetch("/api/v1/me/brands", { headers: { cookie } }))) as { brands: Array<{ brand_slug: string }> }
      expect(listed.brands.map((b) => b.brand_slug)).toEqual(["first", "second", "third"])

      // The scanner picks what to scan with this claim: the account's brands beyond the cap are never in it.
      const claimed = async () => {
        const due = await app.run(Effect.flatMap(ObservationsRepo, (repo) => repo.claimDue(new Date(Date.now() + 1000), 1000)))
        const mine = new Set(listed.brands.map((b) => b.brand_slug))
        return due.filter((brand) => mine.has(brand.slug)).map((brand) => brand.slug).sort()
      }
      expect(await claimed()).toEqual(["first"])
      expect(await claimed()).toEqual([])
      await setPlan(app, email, "starter")
      expect(await claimed()).toEqual(["second", "third"])
    })
  })
}

const serverUrl = process.env.TEST_DATABASE_URL
describe.skipIf(!serverUrl)("a plan downgrade across server processes (PostgreSQL server)", () => {
  it("a plan change made on one process (or by the CLI) applies at once on another that cached the keys", async () => {
    const url = await serverSchemaUrl(serverUrl!)
    const a = await makeTestApp("postgres", { serverUrl: url })
    const b = await makeTestApp("postgres", { serverUrl: url })
    try {
      const email = "two-processes@example.test"
      const cookie = await signup(a, email)
      await setPlan(a, email, "starter")
      const created = [await createKey(a, cookie, "one"), await createKey(a, cookie, "two")]
      const keys = (await keyIds(a, cookie)).map((row) => created.find((key) => key.id === row.id)!.key)
      expect(await Promise.all(keys.map((key) => statusOf(b, key)))).toEqual([200, 200])
      await setPlan(a, email, "free")
      expect(await settle(b, keys, [200, 403])).toEqual([200, 403])
      await setPlan(a, email, "starter")
      expect(await settle(b, keys, [200, 200])).toEqual([200, 200])
    } finally {
      await a.dispose()
      await b.dispose()
    }
  }, 60_000)
})
