/**
 * What each public brands endpoint answers, written for the people and the AI assistants that read
 * the API reference: the OpenAPI description of the endpoint, and the description of its MCP tool
 * (src/mcp/Tools.ts turns each `GET /path` named here into that endpoint's tool name).
 */
export const BrandsDescriptions = {
  list:
    "Lists the brands of the account: slug (brand_slug), name, domain, vertical, site_id, scan cadence, next scan " +
    "and when each was added; `limit` is how many brands the account's plan allows. Call this first when you do not " +
    "know a brand's slug: every per-brand call takes it. Takes no parameters.",
  get:
    "One brand by its slug: name, domain, vertical, site_id (the id of its JavaScript tag and log ingestion), " +
    "scan cadence in hours, next scan and when it was added. Use GET /brands instead when you do not know the slug. " +
    "Parameter: slug (lowercase letters, digits and hyphens). A slug the account does not own answers 404 " +
    "{\"error\":\"brand not found\"}."
} as const
