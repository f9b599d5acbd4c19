import { createHmac, randomBytes } from "node:crypto"

/**
 * The Standard Webhooks convention (docs/webhooks.md): a secret is "whsec_" + base64 of 32 random
 * bytes; a signature is "v1," + base64 of HMAC-SHA256, keyed by the decoded secret, of
 * "<webhook-id>.<webhook-timestamp>.<body>". Several signatures are separated by a space.
 */
export const SECRET_PREFIX = "whsec_"

export const newSecret = (): string => SECRET_PREFIX + randomBytes(32).toString("base64")

export const newEventId = (): string => "msg_" + randomBytes(16).toString("base64url")

const keyOf = (secret: string) => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

export const sign = (secret: string, id: string, timestamp: number, body: string): string =>
  "v1," + createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")

/** The webhook-signature header: the current secret's signature, then the previous one's during a rotation. */
export const signatureHeader = (secrets: ReadonlyArray<string>, id: string, timestamp: number, body: string): string =>
  secrets.map((secret) => sign(secret, id, timestamp, body)).join(" ")
