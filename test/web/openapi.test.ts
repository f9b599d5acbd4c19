import { OpenApi } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { PublicApi } from "../../src/api.js"
import { TWINS } from "../../src/web/Twins.js"
import { createBrand, makeTestApp, signup, type TestApp } from "../helpers/app.js"

interface Document {
  readonly openapi: string
  readonly info: { readonly title: string; readonly version: string }
  readonly paths: Record<string, Record<string, { readonly security?: ReadonlyArray<Record<string, unknown>>; readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string }> }>>
  readonly components: { readonly securitySchemes?: Record<string, { readonly type: string; readonly in?: string; readonly name?: string }> }
}

/** Two OpenAPI documents: the customer API's (unchanged) and the dashboard surface's own. */
describe("OpenAPI documents", () => {
  let app: TestApp
  let cookie: string

  beforeAll(async () => {
    app = await makeTestApp("fake")
    cookie = await signup(app, "openapi@example.test")
    await createBrand(app, cookie, "acme")
  }, 30_000)
  afterAll(() => app.dispose())

  const document = async (path: string) => {
    const response = await app.fetch(path)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    return { text: await response.clone().text(), json: (await response.json()) as Document }
  }

  it("serves the dashboard document at /api/v1/openapi.json without a session", async () => {
    const { json } = await document("/api/v1/openapi.json")
    expect(json.openapi).toStartWith("3.1")
    expect(json.info.title).toBe("Brand AI-Visibility Dashboard API")
    expect(json.components.securitySchemes?.["session"]).toEqual({ type: "apiKey", in: "cookie", name: "aiv_session" })
    for (const path of Object.keys(json.paths)) expect(path).toStartWith("/api/v1/")
    // Sign-up and the account's routes, declared in the HttpApi, are listed.
    expect(json.paths["/api/v1/auth/signup"]?.["post"]).toBeDefined()
    expect(json.paths["/api/v1/me/api-keys"]?.["get"]).toBeDefined()
  })

  it("lists every dashboard twin with the session scheme and its public endpoint's parameters", async () => {
    const { json } = await document("/api/v1/openapi.json")
    const publicDoc = OpenApi.fromApi(PublicApi) as unknown as Document
    for (const { target, twin } of TWINS) {
      const operation = json.paths[`/api/v1/me/brands/{slug}/${twin}`]?.["get"]
      expect({ twin, declared: operation !== undefined }).toEqual({ twin, declared: true })
      expect(operation!.security).toEqual([{ session: [] }])
      const { params, path } = target("{slug}")
      const publicParameters = (publicDoc.paths[`/api/public/v1${path}`]?.["get"]?.parameters ?? [])
        .filter((p) => p.in === "query" && !(p.name in (params ?? {})))
        .map((p) => p.name)
      const twinParameters = (operation!.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name)
      expect({ twin, query: twinParameters }).toEqual({ twin, query: publicParameters })
    }
  })

  it("answers a declared twin as before: the session is required and checked first", async () => {
    const anonymous = await app.fetch("/api/v1/me/brands/acme/snapshots?range=8d")
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toEqual({ error: "not signed in" })
    const signedIn = await app.fetch("/api/v1/me/brands/acme/snapshots?range=7d", { headers: { cookie } })
    expect(signedIn.status).toBe(200)
  })

  it("keeps the customer API's document to the public surface, exactly as the API declares it", async () => {
    const { json, text } = await document("/api/public/v1/openapi.json")
    expect(json.info.title).toBe("Brand AI-Visibility Customer API")
    expect(text).toBe(JSON.stringify(OpenApi.fromApi(PublicApi)))
    for (const path of Object.keys(json.paths)) expect(path).toStartWith("/api/public/v1/")
    expect(Object.keys(json.components.securitySchemes ?? {})).not.toContain("session")
  })
})
