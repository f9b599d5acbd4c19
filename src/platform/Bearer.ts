import { sha256Hex } from "./Digest.js"

/** The token of an `Authorization: Bearer <token>` header, if it is one. */
export const bearerToken = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const header = authorization.trim()
  const space = header.indexOf(" ")
  if (space === -1 || header.slice(0, space).toLowerCase() !== "bearer") return undefined
  const token = header.slice(space + 1).trim()
  return token === "" ? undefined : token
}

/** A key's bucket is named by a digest of the key: no secret is kept in Redis. (The bearer check reuses the digest.) */
export const keyBucket = (token: string) => "key:" + sha256Hex(token).slice(0, 32)

/** A dashboard session's bucket, named by a digest of its cookie as a key's is. */
export const sessionBucket = (token: string) => "session:" + sha256Hex(token).slice(0, 32)
