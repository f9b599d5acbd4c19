/**
 * The transaction-scoped advisory lock under which crawler hits move from crawler_fold_queue into the
 * rollups (docs/performance.md): the aggregator folds under it, and the verdict pass takes it to
 * change a hit's verdict in whichever of the two the hit is in. Held by one transaction at a time,
 * across every process on the database.
 */
export const FOLD_LOCK = 0x61697666 // "aivf"
