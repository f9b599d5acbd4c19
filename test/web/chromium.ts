import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { freePort } from "../hardening/server.js"

/**
 * A real server (`bun run start` on a free port, fresh embedded database) and headless Chromium
 * (Debian's /usr/bin/chromium driven by playwright-core), with the flags of the browser tests.
 * In CI (CI=true) a missing Chromium fails the test instead of skipping it.
 */

export const CHROMIUM = "/usr/bin/chromium"
export const ROOT = join(import.meta.dir, "..", "..")
export const haveChromium = existsSync(CHROMIUM)
if (!haveChromium && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs chromium`)

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

export interface Served {
  readonly base: string
  readonly stop: () => Promise<void>
}

/**
 * Signs in as the demo account and waits until the server has filled the demo workspace in the
 * background (GET /api/v1/me: `data_fill.status` "ready"); fails if the fill fails or takes too long.
 */
export const waitForDemo = async (base: string, timeoutMs = 540_000): Promise<string> => {
  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify({ email: "demo@example.com", password: "demo-password-2026" })
  })
  if (login.status !== 200) throw new Error(`demo sign-in: ${login.status}`)
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const me = (await (await fetch(`${base}/api/v1/me`, { headers: { cookie } })).json()) as { data_fill?: { status: string } }
    if (me.data_fill === undefined || me.data_fill.status === "ready") return cookie
    if (me.data_fill.status === "failed") throw new Error("the demo workspace failed to fill")
    await Bun.sleep(500)
  }
  throw new Error("the demo workspace did not fill in time")
}

/** Starts the service and waits for /healthz, and with DEMO=1 for the demo workspace to be filled. */
export const startServer = async (env: Record<string, string>): Promise<Served> => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-browser-"))
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  const server = Bun.spawn(["bun", "run", "start"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, DATABASE_URL: "", ...env },
    stdout: "ignore",
    stderr: "ignore"
  })
  const stop = async () => {
    server.kill("SIGTERM")
    await server.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  for (let i = 0; i < 2400; i++) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) {
      if (env["DEMO"] === "1") await waitForDemo(base)
      return { base, stop }
    }
    if (server.exitCode !== null) break
    await Bun.sleep(100)
  }
  await stop()
  throw new Error("server did not come up")
}

/** A fresh Chromium profile and its first page; errors thrown by the page are collected. */
export const openBrowser = async (width = 1280, height = 900) => {
  const profileDir = mkdtempSync(join(tmpdir(), "aiv-chromium-"))
  const context: BrowserContext = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width, height }
  })
  const page: Page = context.pages()[0] ?? await context.newPage()
  const pageErrors: Array<string> = []
  page.on("pageerror", (error) => pageErrors.push(error.message))
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) pageErrors.push(message.text())
  })
  const close = async () => {
    await context.close()
    rmSync(profileDir, { recursive: true, force: true })
  }
  return { context, page, pageErrors, close }
}
