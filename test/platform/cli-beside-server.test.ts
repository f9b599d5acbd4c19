import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GPTBOT, type RunningServer, startServer } from "../hardening/server.js"

/**
 * The operator CLI beside a running server on the embedded database: the server holds the data
 * directory, and each command reaches the database through the server's channel (a unix socket in
 * DATA_DIR, src/platform/EmbeddedChannel.ts), as the README's own sequence does (start, sign up,
 * upgrade the plan, ...) without stopping the server. The server sees each change at once.
 */

const root = join(import.meta.dir, "..", "..")

/** The environment of a newcomer's shell: no server database, no Redis. */
const baseEnv = (): Record<string, string | undefined> => {
  const { DATABASE_URL: _database, REDIS_URL: _redis, TEST_DATABASE_URL: _test, ...rest } = process.env
  return rest
}

const fixture = (name: string) => Bun.file(new URL(`../fixtures/engines/${name}.json`, import.meta.url)).json()

describe("the CLI while a server holds the embedded database", () => {
  let work: string
  let server: RunningServer
  let engine: ReturnType<typeof Bun.serve>
  let cookie = ""
  let key = ""
  let siteId = ""
  const email = "operator@example.test"

  const cli = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const child = Bun.spawn(["bun", "run", "src/app/cli.ts", ...args], {
      cwd: root,
      env: { ...baseEnv(), DATA_DIR: join(work, "data"), SPOOL_DIR: join(work, "spool-cli"), ...env },
      stdout: "pipe",
      stderr: "pipe"
    })
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    return { stdout, stderr, code }
  }

  const dashboard = (path: string, body: unknown) =>
    fetch(`${server.base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.base, cookie },
      body: JSON.stringify(body)
    })

  const ingest = () =>
    fetch(`${server.base}/api/public/v1/agents/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ site_id: siteId, records: [{ ua: GPTBOT, path: "/pricing", ref: "", ip: "192.0.2.7", ts: Math.floor(Date.now() / 1000), status: 200 }] })
    })

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "aiv-cli-beside-"))
    // A local answer engine for `scan` (OpenAI's chat protocol), as the README configures one.
    engine = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async () => Response.json(await fixture("openai-chat")) })
    server = await startServer(
      { DATA_DIR: join(work, "data"), SPOOL_DIR: join(work, "spool"), SCANNER_ENABLED: "false", LOG_REQUESTS: "false" },
      60_000,
      { baseEnv: baseEnv() }
    )
    const signup = await fetch(`${server.base}/api/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.base },
      body: JSON.stringify({ email, password: "correct horse battery", account_name: "Operator" })
    })
    expect(signup.status).toBe(201)
    cookie = (signup.headers.get("set-cookie") ?? "").split(";")[0]!
    const brand = await dashboard("/api/v1/me/brands", { brand_slug: "acme", brand_name: "Acme", domain: "acme.example", vertical: "saas" })
    expect(brand.status).toBe(201)
    siteId = ((await brand.json()) as { site_id: string }).site_id
    expect((await dashboard("/api/v1/me/brands/acme/prompts", { prompt: "best crm for a small team" })).status).toBe(201)
    key = ((await (await dashboard("/api/v1/me/api-keys", { name: "ops" })).json()) as { key: string }).key
  }, 90_000)

  afterAll(async () => {
    await server?.stop()
    engine?.stop(true)
    rmSync(work, { recursive: true, force: true })
  })

  it("plan set: the account moves, and the running server lets the batch endpoint in at once", async () => {
    const before = await ingest()
    expect(before.status).toBe(403)
    const { code, stderr, stdout } = await cli(["plan", "set", email, "growth"])
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    expect(stdout).toContain(`of ${email} is now on the growth plan`)
    const me = (await (await fetch(`${server.base}/api/v1/me`, { headers: { cookie } })).json()) as { plan: { id: string } }
    expect(me.plan.id).toBe("growth")
    const after = await ingest()
    expect(after.status).toBe(200)
    expect(((await after.json()) as { accepted: number }).accepted).toBe(1)
  }, 60_000)

  it("verify gives its verdict", async () => {
    const { code, stderr, stdout } = await cli(["verify", "192.0.2.7", GPTBOT])
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    expect(stdout).toContain("GPTBot")
    expect(stdout).not.toContain("locked")
  }, 60_000)

  it("ranges update saves a snapshot and the running server reloads it", async () => {
    const { code, stderr, stdout } = await cli(["ranges", "update", "--from", "src/verification/ranges"])
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    expect(stdout).toMatch(/saved range snapshot \d+ of/)
    const until = Date.now() + 10_000
    while (!server.stdout().includes("range snapshot of") && Date.now() < until) await Bun.sleep(100)
    expect(server.stdout()).toContain("range snapshot of")
  }, 60_000)

  it("scan stores observations the running server then answers", async () => {
    const { code, stderr, stdout } = await cli(["scan", "--brand", "acme", "--samples", "1"], {
      ENGINE_CHATGPT_PROTOCOL: "openai-chat",
      ENGINE_CHATGPT_URL: `http://127.0.0.1:${engine.port}/v1`,
      ENGINE_CHATGPT_MODEL: "gpt-test",
      ENGINE_CHATGPT_API_KEY: "k"
    })
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    expect(stdout).toMatch(/chatgpt +[1-9]\d* stored +0 failed/)
    const scans = (await (await fetch(`${server.base}/api/v1/me/brands/acme/scans`, { headers: { cookie } })).json()) as {
      engines: ReadonlyArray<{ stored: number }>
    }
    expect(JSON.stringify(scans)).toContain("chatgpt")
  }, 90_000)

  it("a command's transaction holds the session: the server's own work waits and goes on after", async () => {
    // Several commands at once beside requests: none fails, and the server still answers.
    const [a, b, health] = await Promise.all([
      cli(["plan", "set", email, "starter"]),
      cli(["plan", "set", email, "growth"]),
      fetch(`${server.base}/healthz`)
    ])
    expect([a.code, b.code, health.status]).toEqual([0, 0, 200])
    // The channel's socket lives in the data directory while the server runs.
    expect(existsSync(join(work, "data", "aiv.sock"))).toBe(true)
  }, 60_000)
})

describe("the CLI's output through a pipe", () => {
  const run = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const child = Bun.spawn(["bun", "run", "src/app/cli.ts", ...args], {
      cwd: root,
      env: { ...baseEnv(), ...env },
      stdout: "pipe",
      stderr: "pipe"
    })
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    return { stdout, stderr, code }
  }

  it("--help: no colour codes, and no line past 100 columns", async () => {
    for (const args of [["--help"], ["ship", "--help"], ["plan"]]) {
      const { stderr, stdout } = await run(args)
      const text = stdout + stderr
      expect(text).toContain("DESCRIPTION")
      expect({ args, ansi: /\x1b\[/.test(text) }).toEqual({ args, ansi: false })
      const widest = Math.max(...text.split("\n").map((line) => line.length))
      expect({ args, within: widest <= 100 }).toEqual({ args, within: true })
    }
    const { stdout } = await run(["--help"])
    expect(stdout).toMatch(/- plan set <email> <plan>/)
    expect(stdout).toMatch(/\n {6}move that user's account to a plan/)
  }, 60_000)

  it("ship takes the key from AIV_API_KEY, and says --key is discouraged when given", async () => {
    const missing = join(tmpdir(), `aiv-no-such-file-${crypto.randomUUID()}.log`)
    const site = "00000000-0000-4000-8000-000000000000"
    const withKey = await run(["ship", missing, "--site", site, "--key", "aivkey_secret", "--url", "http://127.0.0.1:9", "--quiet"])
    expect(withKey.stderr).toContain("--key shows the API key")
    expect(withKey.stderr).toContain("AIV_API_KEY")
    const fromEnv = await run(["ship", missing, "--site", site, "--url", "http://127.0.0.1:9", "--quiet"], { AIV_API_KEY: "aivkey_secret" })
    expect(fromEnv.stderr).not.toContain("--key shows the API key")
    expect(fromEnv.stderr).not.toContain("--key is required")
  }, 60_000)
})
