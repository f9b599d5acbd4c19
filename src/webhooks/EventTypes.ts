/**
 * The webhook event types (docs/webhooks.md), in a module of their own with no imports so that the
 * browser bundle of the web application reads the same list as the server.
 */
export const EVENT_TYPES = [
  "ping",
  "crawler.new_bot",
  "crawler.spoofed_surge",
  "ingestion.stalled",
  "ingestion.quota",
  "visibility.changed",
  "citation.gained",
  "citation.lost"
] as const
export type EventType = (typeof EVENT_TYPES)[number]
