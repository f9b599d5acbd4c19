import { setDefaultTimeout } from "bun:test"

// Embedded PostgreSQL starts in seconds, more on a loaded machine. setDefaultTimeout here reaches only
// the first test file in Bun 1.4.5, so the README's command passes `--timeout 60000` for all of them.
setDefaultTimeout(60_000)
