import { Context, type Effect } from "effect"

/**
 * What ingestion reports as it works: each store of crawler hits and each delivery, refused ones
 * included. Declared here, where the facts happen, and provided by a layer above that acts on them
 * (the webhooks' `AlertsLive`: crawler.new_bot, ingestion.quota and ingestion health, docs/webhooks.md),
 * so that ingestion imports nothing of the webhooks. A report never fails the request that caused it.
 */

export interface StoredHit {
  readonly bot: string
  readonly vendor: string
  readonly kind: string
  /** Milliseconds since the epoch. */
  readonly ts: number
  readonly path: string
}

export interface IngestionDelivery {
  readonly accountId: number
  readonly siteId: string
  /** api, edge_worker, cdn_webhook, csv_upload, drain, tag. */
  readonly channel: string
  /** How the records came: json (the batch), beacon (the tag), or the log format a drain delivery was read as. */
  readonly format: string
  readonly records: number
  readonly accepted: number
  readonly unparseable: number
  /** The delivery was refused for its signature (missing or wrong). */
  readonly signatureFailure: boolean
}

export interface IngestionReportsShape {
  /** After a store of crawler hits: crawler.new_bot for each bot the brand never had, ingestion.quota at 80% and 100%. */
  readonly hitsStored: (input: {
    readonly accountId: number
    readonly brandId: number
    readonly month: string
    readonly used: number
    readonly cap: number
    /** The hits offered to the store, of which at most the first `room` were stored. */
    readonly hits: ReadonlyArray<StoredHit>
    readonly stored: number
  }) => Effect.Effect<void>
  /**
   * Every ingestion delivery, refused ones included, for GET /me/brands/{slug}/ingestion: summed in
   * memory per brand, channel and hour, written once a second (one statement per row, not per delivery).
   */
  readonly delivery: (input: IngestionDelivery) => Effect.Effect<void>
}

export class IngestionReports extends Context.Tag("IngestionReports")<IngestionReports, IngestionReportsShape>() {}
