import Ajv2020 from "ajv/dist/2020.js"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { RateLimitRules } from "../../src/platform/Config.js"
import { bearer, createKey, makeTestApp, signup, type TestApp } from "../helpers/app.js"

/**
 * Both OpenAPI documents as standard tools read them: Ajv (JSON Schema 2020-12) compiles every schema
 * they hold, Redocly's recommended rules find nothing, and every answer the edge gives (429 with
 * consistent rate-limit headers, 413, 415, 403, 503) is documented for the operation that gave it.
 */

interface Response {
  readonly description: string
  readonly headers?: Record<string, unknown>
  readonly content?: Record<string, { readonly schema: unknown }>
}
interface Operation {
  readonly operationId: string
  readonly responses: Record<string, Response>
  readonly parameters: ReadonlyArray<unknown>
  readonly requestBody?: { readonly content: Record<string, { readonly schema: unknown }> }
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, unknown>; readonly headers?: Record<string, unknown> }
}

const OFF = { limit: 0, windowSeconds: 1 }
const rules: RateLimitRules = {
  apiKey: { limit: 3, windowSeconds: 60 },
  apiIp: OFF,
  collectSite: OFF,
  authEmail: { limit: 2, windowSeconds: 300 },
  authIp: OFF
}

/** A JSON pointer segment in a URI fragment, as Ajv reads it. */
const segment = (s: string) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1"))

/** Ajv 2020 over one document: the document added whole, then every schema it holds compiled. */
const ajvOf = (doc: Document) => {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true, validateFormats: false })
  // The document's own top-level fields are not JSON Schema keywords: declared, so strict mode accepts the root.
  ajv.addVocabulary(["openapi", "info", "paths", "components", "security", "tags", "servers"])
  ajv.addSchema(doc, "doc")
  return ajv
}

const schemaPointers = (doc: Document): Array<string> => {
  const pointers = Object.keys(doc.components.schemas).map((name) => `#/components/schemas/${segment(name)}`)
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const at = `#/paths/${segment(path)}/${method}`
      for (const [status, response] of Object.entries(op.responses)) {
        for (const type of Object.keys(response.content ?? {})) pointers.push(`${at}/responses/${status}/content/${segment(type)}/schema`)
      }
      for (const type of Object.keys(op.requestBody?.content ?? {})) pointers.push(`${at}/requestBody/content/${segment(type)}/schema`)
      op.parameters.forEach((_, i) => pointers.push(`${at}/parameters/${i}/schema`))
    }
  }
  return pointers
}

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))

const operation = (doc: Document, path: string, method: string): Operation => {
  const op = doc.paths[path]?.[method]
  if (op === undefined) throw new Error(`${method} ${path} is not documented`)
  return op
}

/** The documented answer of `op` to `response`: its status is listed, its body is valid, its headers are named. */
const expectDocumented = async (ajv: Ajv2020, path: string, method: string, op: Operation, response: globalThis.Response) => {
  const status = String(response.status)
  const documented = op.responses[status]
  expect({ operation: op.operationId, status, documented: documented !== undefined }).toEqual({ operation: op.operationId, status, documented: true })
  const validate = ajv.getSchema(`doc#/paths/${segment(path)}/${method}/responses/${status}/content/${segment("application/json")}/schema`)
  expect(validate).toBeDefined()
  const body: unknown = await response.json()
  expect({ status, body, valid: validate!(body), errors: validate!.errors ?? null }).toEqual({ status, body, valid: true, errors: null })
  const named = Object.keys(documented!.headers ?? {}).map((name) => name.toLowerCase())
  return named
}

describe("the OpenAPI documents under Ajv 2020 and Redocly, with every answer documented", () => {
  let app: TestApp
  let publicDoc: Document
  let dashboardDoc: Document
  let work: string

  beforeAll(async () => {
    app = await makeTestApp("fake", { config: { rateLimits: rules, maxBodyBytes: 4096 } })
    publicDoc = (await (await app.fetch("/api/public/v1/openapi.json")).json()) as Document
    dashboardDoc = (await (await app.fetch("/api/v1/openapi.json")).json()) as Document
    work = mkdtempSync(join(tmpdir(), "aiv-openapi-"))
  }, 30_000)
  afterAll(async () => {
    rmSync(work, { recursive: true, force: true })
    await app.dispose()
  })

  it("Ajv (JSON Schema 2020-12, strict) loads each document and compiles every schema in it", () => {
    for (const doc of [publicDoc, dashboardDoc]) {
      const ajv = ajvOf(doc)
      const pointers = schemaPointers(doc)
      expect(pointers.length).toBeGreaterThan(200)
      for (const pointer of pointers) expect({ pointer, compiled: typeof ajv.getSchema(`doc${pointer}`) }).toEqual({ pointer, compiled: "function" })
    }
    // No schema of Schema.Unknown's (`$id: /schemas/unknown`) is left: a validator would take two for one.
    expect(JSON.stringify([publicDoc, dashboardDoc])).not.toContain('"$id"')
  })

  it("Redocly's recommended rules find no error and no warning in either document", async () => {
    for (const [name, doc] of [["public", publicDoc], ["dashboard", dashboardDoc]] as const) {
      const file = join(work, `${name}.json`)
      writeFileSync(file, JSON.stringify(doc))
      // The repository's redocly.yaml (recommended rules); no telemetry, no update check: nothing leaves the machine.
      const run = Bun.spawn([process.execPath, "node_modules/@redocly/cli/bin/cli.js", "lint", file, "--format=json"], {
        cwd: join(import.meta.dir, "../.."),
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe"
      })
      const [out, code] = await Promise.all([new Response(run.stdout).text(), run.exited])
      const report = JSON.parse(out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1)) as {
        totals: { errors: number; warnings: number }
        problems: ReadonlyArray<{ ruleId: string; message: string }>
      }
      expect({ name, totals: report.totals, problems: report.problems.map((p) => `${p.ruleId}: ${p.message}`) })
        .toEqual({ name, totals: { errors: 0, warnings: 0, ignored: 0 } as typeof report.totals, problems: [] })
      expect(code).toBe(0)
    }
  }, 60_000)

  it("documents 413 and 503 on every operation, 429 on every public one, 415 and the CSRF 403 on every dashboard change", () => {
    for (const { method, op, path } of operations(publicDoc)) {
      expect({ path, statuses: ["413", "429", "503"].filter((s) => op.responses[s] === undefined) }).toEqual({ path, statuses: [] })
      expect(Object.keys(op.responses["429"]!.headers ?? {}).sort()).toEqual(["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After"])
      void method
    }
    for (const { method, op, path } of operations(dashboardDoc)) {
      const wanted = ["413", "503", ...(method === "get" ? [] : ["403", "415"])]
      expect({ path, method, missing: wanted.filter((s) => op.responses[s] === undefined) }).toEqual({ path, method, missing: [] })
    }
    expect(operation(dashboardDoc, "/api/v1/auth/login", "post").responses["429"]).toBeDefined()
    expect(operation(dashboardDoc, "/api/v1/auth/signup", "post").responses["429"]).toBeDefined()
  })

  it("a public read's 429: documented, its body valid, its headers named, Retry-After and RateLimit-Reset the same moment", async () => {
    const cookie = await signup(app, "documented@example.test")
    const { key } = await createKey(app, cookie)
    const path = "/api/public/v1/brands"
    const op = operation(publicDoc, path, "get")
    const ajv = ajvOf(publicDoc)
    for (let i = 0; i < 3; i++) {
      const ok = await app.fetch(path, { headers: bearer(key) })
      expect(ok.status).toBe(200)
      const named = await expectDocumented(ajv, path, "get", op, ok)
      for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
        expect(named).toContain(name)
        expect(ok.headers.get(name)).not.toBeNull()
      }
    }
    const refused = await app.fetch(path, { headers: bearer(key) })
    expect(refused.status).toBe(429)
    const retryAfter = refused.headers.get("retry-after")
    expect(retryAfter).toBe("20")
    expect(refused.headers.get("ratelimit-reset")).toBe(retryAfter)
    const named = await expectDocumented(ajv, path, "get", op, refused)
    for (const name of named) expect({ name, sent: refused.headers.get(name) !== null }).toEqual({ name, sent: true })
  })

  it("the edge's 413 of a public route and the CSRF guard's 403 and 415 of a dashboard change are documented", async () => {
    const publicAjv = ajvOf(publicDoc)
    const ingest = "/api/public/v1/agents/ingest"
    const tooLarge = await app.fetch(ingest, { method: "POST", headers: { "content-type": "application/json", "content-length": "5000" }, body: "x".repeat(5000) })
    expect(tooLarge.status).toBe(413)
    await expectDocumented(publicAjv, ingest, "post", operation(publicDoc, ingest, "post"), tooLarge)

    const cookie = await signup(app, "csrf-documented@example.test")
    const dashboardAjv = ajvOf(dashboardDoc)
    const keys = "/api/v1/me/api-keys"
    const op = operation(dashboardDoc, keys, "post")
    const foreign = await app.fetch(keys, {
      method: "POST",
      headers: { cookie, origin: "https://elsewhere.example", "content-type": "application/json" },
      body: JSON.stringify({ name: "k" })
    })
    expect(foreign.status).toBe(403)
    await expectDocumented(dashboardAjv, keys, "post", op, foreign)
    const form = await app.fetch(keys, {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" },
      body: "name=k"
    })
    expect(form.status).toBe(415)
    await expectDocumented(dashboardAjv, keys, "post", op, form)
  })

  it("sign-in's 429 is documented with its headers", async () => {
    const path = "/api/v1/auth/login"
    const op = operation(dashboardDoc, path, "post")
    const login = () =>
      app.fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "nobody@example.test", password: "wrong password" })
      })
    expect((await login()).status).toBe(401)
    expect((await login()).status).toBe(401)
    const refused = await login()
    expect(refused.status).toBe(429)
    expect(refused.headers.get("ratelimit-reset")).toBe(refused.headers.get("retry-after"))
    const named = await expectDocumented(ajvOf(dashboardDoc), path, "post", op, refused)
    expect(named.sort()).toEqual(["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after"])
  })
})
