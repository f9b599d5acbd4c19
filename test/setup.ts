import { setDefaultTimeout } from "bun:test"

// Embedded PostgreSQL starts in seconds, more on a loaded machine: every test and hook gets a minute.
setDefaultTimeout(60_000)
