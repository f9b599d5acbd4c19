import type { RateLimitRule, RateLimitRules } from "../../src/platform/Config.js"
import { bearer, type TestApp } from "./app.js"

/** A rate limit switched off. */
export const LIMIT_OFF: RateLimitRule = { limit: 0, windowSeconds: 1 }

/** Every rate limit off but those given. */
export const limitRules = (overrides: Partial<RateLimitRules>): RateLimitRules => ({
  apiKey: LIMIT_OFF,
  apiIp: LIMIT_OFF,
  collectSite: LIMIT_OFF,
  authEmail: LIMIT_OFF,
  authIp: LIMIT_OFF,
  ...overrides
})

/** A JSON-RPC message to POST /mcp with this key, as an MCP client sends it. */
export const postMcp = (app: TestApp, key: string, body: string, headers: Record<string, string> = {}) =>
  app.fetch("/mcp", {
    method: "POST",
    headers: { ...headers, ...bearer(key), "content-type": "application/json", accept: "application/json, text/event-stream" },
    body
  })
