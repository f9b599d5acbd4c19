import type { ChannelHealth as ChannelHealthSchema, Delivery as DeliverySchema, IngestionHealth as IngestionHealthSchema, WebhookEndpoint } from "../../webhooks/Api.js"
import { EVENT_TYPES as ALL_EVENT_TYPES } from "../../webhooks/EventTypes.js"
import { call, describeError, get, post } from "./api.js"
import { append, clear, copyButton, formatDate, formatNumber, h } from "./dom.js"
import { channelLabel } from "./labels.js"
import { emptyState, errorBox, loadingState, tableWrap } from "./kit.js"

/**
 * Webhooks (#/settings/webhooks): endpoints with their events, test, rotation, enable/disable and
 * deletion; each endpoint's deliveries with every attempt and a retry; the account's event log.
 * And the ingestion health card of a brand (the Brands page). docs/webhooks.md.
 */

/** What an endpoint can subscribe to: every event type but ping, which the test button sends to any endpoint. */
const EVENT_TYPES = ALL_EVENT_TYPES.filter((type) => type !== "ping")

// The server's own schemas, wire side (type-only: nothing of effect reaches the browser bundle).
type Endpoint = typeof WebhookEndpoint.Encoded
type Delivery = typeof DeliverySchema.Encoded
type ChannelHealth = typeof ChannelHealthSchema.Encoded
type IngestionHealth = typeof IngestionHealthSchema.Encoded

const secretPanel = (title: string, secret: string, done: () => void) =>
  h(
    "div",
    { class: "success", id: "webhook-secret-panel" },
    h("strong", null, title, " "),
    "Copy the signing secret now: it is shown this once.",
    h("p", null, h("code", { id: "webhook-secret" }, secret), " ", copyButton(() => secret)),
    h("button", { type: "button", class: "secondary", onclick: done }, "Done")
  )

const deliveriesTable = (endpointId: string, rows: ReadonlyArray<Delivery>, reload: () => void) =>
  rows.length === 0
    ? h("p", { class: "muted" }, "No deliveries yet.")
    : tableWrap(h(
      "table",
      { class: "deliveries", "aria-label": "Deliveries" },
      h("thead", null, h("tr", null, ["Event", "Status", "Attempts", "Last response", "Created", "Next attempt", ""].map((t) => h("th", null, t)))),
      h(
        "tbody",
        null,
        rows.map((d) =>
          h(
            "tr",
            null,
            h("td", null, h("strong", null, d.type), h("div", { class: "muted" }, h("code", null, d.event_id))),
            h("td", null, h("span", { class: `badge ${d.status === "delivered" ? "active" : d.status === "failed" ? "revoked" : ""}` }, d.status)),
            h(
              "td",
              null,
              String(d.attempts),
              d.attempt_log.map((a) =>
                h("div", { class: "muted" }, `#${a.attempt} ${formatDate(a.at)}: ${a.response_status ?? "no answer"}${a.error ? ` (${a.error})` : ""}, ${a.duration_ms} ms`)
              )
            ),
            h("td", null, d.response_status === null ? (d.last_error ?? "") : String(d.response_status)),
            h("td", null, formatDate(d.created_at)),
            h("td", null, d.next_attempt_at ? formatDate(d.next_attempt_at) : ""),
            h(
              "td",
              null,
              d.status === "delivered" ? null : h("button", {
                type: "button",
                class: "secondary",
                onclick: async () => {
                  await post(`/api/v1/me/webhooks/${endpointId}/deliveries/${d.id}/retry`)
                  reload()
                }
              }, "Retry")
            )
          )
        )
      )
    ), "Deliveries")

const endpointCard = (endpoint: Endpoint, refresh: () => Promise<void>) => {
  const status = h("div")
  const deliveries = h("div")
  const act = async (method: "POST" | "PATCH" | "DELETE", path: string, body?: unknown) => {
    clear(status)
    const result = await call<{ secret?: string }>(method, path, body)
    if (!result.ok) {
      append(status, [errorBox(describeError(result.error))])
      return null
    }
    return result.value ?? {}
  }
  const showDeliveries = async () => {
    const result = await get<{ deliveries: ReadonlyArray<Delivery> }>(`/api/v1/me/webhooks/${endpoint.id}/deliveries`)
    clear(deliveries)
    append(deliveries, [result.ok ? deliveriesTable(endpoint.id, result.value.deliveries, () => void showDeliveries()) : errorBox(describeError(result.error))])
  }
  return h(
    "div",
    { class: "card", "data-webhook": endpoint.id },
    h("h2", null, h("code", null, endpoint.url), " ", h("span", { class: `badge ${endpoint.enabled ? "active" : "revoked"}` }, endpoint.enabled ? "enabled" : "disabled")),
    endpoint.description ? h("p", null, endpoint.description) : null,
    endpoint.disabled_reason ? h("div", { class: "notice" }, endpoint.disabled_reason) : null,
    endpoint.failing_since && endpoint.enabled ? h("div", { class: "notice" }, `Failing since ${formatDate(endpoint.failing_since)}.`) : null,
    h("p", { class: "muted" }, `Events: ${endpoint.events.join(", ")} · created ${formatDate(endpoint.created_at)}`),
    h(
      "div",
      { class: "row" },
      h("button", {
        type: "button",
        class: "secondary",
        onclick: async () => {
          if ((await act("POST", `/api/v1/me/webhooks/${endpoint.id}/test`)) !== null) {
            append(status, [h("span", { class: "muted" }, "Ping queued.")])
            setTimeout(() => void showDeliveries(), 1500)
          }
        }
      }, "Send test"),
      h("button", { type: "button", class: "secondary", onclick: showDeliveries }, "Deliveries"),
      h("button", {
        type: "button",
        class: "secondary",
        onclick: async () => {
          const answer = await act("POST", `/api/v1/me/webhooks/${endpoint.id}/rotate-secret`)
          if (answer?.secret) {
            append(status, [secretPanel("Secret rotated. The old one keeps signing for 24 hours.", answer.secret, () => clear(status))])
          }
        }
      }, "Rotate secret"),
      h("button", {
        type: "button",
        class: "secondary",
        onclick: async () => (await act("PATCH", `/api/v1/me/webhooks/${endpoint.id}`, { enabled: !endpoint.enabled })) !== null && refresh()
      }, endpoint.enabled ? "Disable" : "Enable"),
      h("button", {
        type: "button",
        class: "danger",
        onclick: async () => confirm(`Delete the webhook to ${endpoint.url}?`) && (await act("DELETE", `/api/v1/me/webhooks/${endpoint.id}`)) !== null && refresh()
      }, "Delete")
    ),
    status,
    deliveries
  )
}

export const webhooksPage = () => {
  const page = h("div")
  const list = h("div")
  const log = h("div")
  const status = h("div")
  const url = h("input", { id: "webhook-url", type: "url", placeholder: "https://hooks.example.com/ai-visibility", required: true, size: 50 })
  const description = h("input", { id: "webhook-description", placeholder: "description (optional)" })
  const boxes = EVENT_TYPES.map((type) => ({ type, box: h("input", { type: "checkbox", value: type, checked: true }) }))

  const refresh = async () => {
    const [endpoints, events] = await Promise.all([
      get<{ webhooks: ReadonlyArray<Endpoint> }>("/api/v1/me/webhooks"),
      get<{ events: ReadonlyArray<{ id: string; type: string; created_at: string; data: unknown }> }>("/api/v1/me/webhook-events")
    ])
    clear(list)
    clear(log)
    if (!endpoints.ok) append(list, [errorBox(describeError(endpoints.error))])
    else if (endpoints.value.webhooks.length === 0) {
      append(list, [emptyState("No webhooks yet. Add one above to be told when a new AI bot shows up, traffic turns out spoofed, visibility moves or a log source goes quiet.")])
    }
    else append(list, [endpoints.value.webhooks.map((e) => endpointCard(e, refresh))])
    if (!events.ok) append(log, [errorBox(describeError(events.error))])
    else {
      append(log, [
        events.value.events.length === 0
          ? h("p", { class: "muted" }, "No events yet.")
          : tableWrap(h(
            "table",
            { id: "event-log", "aria-label": "Event log" },
            h("thead", null, h("tr", null, h("th", null, "When"), h("th", null, "Event"), h("th", null, "Data"))),
            h("tbody", null, events.value.events.map((e) =>
              h("tr", null, h("td", null, formatDate(e.created_at)), h("td", null, e.type), h("td", null, h("code", null, JSON.stringify(e.data))))
            ))
          ), "Event log")
      ])
    }
  }

  const form = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault()
        clear(status)
        const result = await post<{ secret: string }>("/api/v1/me/webhooks", {
          url: url.value.trim(),
          events: boxes.filter((b) => b.box.checked).map((b) => b.type),
          description: description.value.trim()
        })
        if (!result.ok) return append(status, [errorBox(describeError(result.error))])
        url.value = description.value = ""
        append(status, [secretPanel("Webhook created.", result.value.secret, () => clear(status))])
        await refresh()
      }
    },
    h("div", { class: "row" }, h("div", null, h("label", { for: "webhook-url" }, "URL"), url), h("div", null, h("label", { for: "webhook-description" }, "Description"), description)),
    h("label", null, "Events"),
    h("div", { class: "row" }, boxes.map((b) => h("label", { class: "muted" }, b.box, ` ${b.type}`))),
    h("p", null, h("button", { type: "submit", id: "create-webhook" }, "Add webhook"))
  )

  append(page, [
    h("div", { class: "crumbs" }, "Settings › Webhooks"),
    h("h1", null, "Webhooks"),
    h(
      "p",
      { class: "muted" },
      "Signed (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) and retried with backoff for about a day. ",
      "docs/webhooks.md has a receiver that verifies the signature."
    ),
    h("div", { class: "card" }, h("h2", null, "Add a webhook"), form, status),
    list,
    h("div", { class: "card" }, h("h2", null, "Event log"), log)
  ])
  void refresh()
  return page
}

/** What to fix when a channel shows failures. */
const advice = (c: ChannelHealth, health: IngestionHealth): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (c.signature_failures_24h > 0) {
    out.push("Signature failures: the drain secret saved here must be the platform's signing secret (or remove it).")
  }
  if (c.unparseable_24h > 0) out.push("Unparseable deliveries: check the drain's format and that the URL carries this brand's site_id.")
  if (health.monthly_cap > 0 && health.monthly_used >= health.monthly_cap) out.push("The monthly cap is reached: new hits are dropped until next month or a larger plan.")
  return out
}

export const ingestionHealthCard = (slug: string) => {
  const body = h("div", null, loadingState())
  void get<IngestionHealth>(`/api/v1/me/brands/${slug}/ingestion`).then((result) => {
    clear(body)
    if (!result.ok) return append(body, [errorBox(`Ingestion health could not be loaded. ${describeError(result.error)}`)])
    const health = result.value
    append(body, [
      h(
        "p",
        { class: "muted" },
        `This month: ${formatNumber(health.monthly_used)} of ${formatNumber(health.monthly_cap)} events.`,
        health.spool_pending > 0 ? ` ${health.spool_pending} drain deliveries wait in the spool.` : ""
      ),
      health.channels.length === 0
        ? h(
          "p",
          { class: "muted" },
          health.monthly_used > 0
            ? "No log source has delivered to this brand lately."
            : "Nothing received yet: connect a log source above, or paste the tracking tag from the agent dashboard."
        )
        : tableWrap(h(
          "table",
          { class: "ingestion-health", "aria-label": "Ingestion health" },
          h("thead", null, h("tr", null, ["Channel", "Last received", "Deliveries 24h", "Records", "Accepted", "Skipped", "Unparseable", "Bad signature"].map((t) => h("th", null, t)))),
          h("tbody", null, health.channels.flatMap((c) => [
            h(
              "tr",
              null,
              h("td", null, channelLabel(c.channel), h("div", { class: "muted" }, c.format)),
              h("td", null, formatDate(c.last_received_at)),
              [c.deliveries_24h, c.records_24h, c.accepted_24h, c.skipped_24h, c.unparseable_24h, c.signature_failures_24h].map((n) =>
                h("td", { class: "num" }, formatNumber(n))
              )
            ),
            ...advice(c, health).map((text) => h("tr", null, h("td", { colspan: 8 }, h("div", { class: "notice" }, text))))
          ]))
        ), "Ingestion health")
    ])
  })
  return h("div", null, h("h3", null, "Ingestion health"), body)
}
