import { Context, Effect, Layer, Schema } from "effect"
import { promises as dns } from "node:dns"
import { errorCode } from "../platform/Guards.js"

/**
 * DNS for the reverse-DNS check of verified agents (docs/verification.md): PTR names of an address,
 * and the addresses of a name. Tests use a fake (a table and an optional delay).
 */
export class ResolveError extends Schema.TaggedError<ResolveError>()("ResolveError", { reason: Schema.Literal("not_found", "failed") }) {}

export interface ResolverShape {
  readonly reverse: (ip: string) => Effect.Effect<ReadonlyArray<string>, ResolveError>
  readonly forward: (host: string) => Effect.Effect<ReadonlyArray<string>, ResolveError>
}

export class Resolver extends Context.Tag("Resolver")<Resolver, ResolverShape>() {}

const NOT_FOUND = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN", "ENONAME"])
const failure = (cause: unknown) =>
  new ResolveError({
    reason: NOT_FOUND.has(String(errorCode(cause) ?? "")) ? "not_found" : "failed"
  })

/** The system resolver (node:dns): PTR, then A and AAAA of the name. */
export const ResolverLive = Layer.succeed(Resolver, {
  reverse: (ip) => Effect.tryPromise({ try: () => dns.reverse(ip), catch: failure }),
  forward: (host) =>
    Effect.tryPromise({
      try: async () => {
        const [v4, v6] = await Promise.allSettled([dns.resolve4(host), dns.resolve6(host)])
        const out = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])]
        if (out.length === 0 && v4.status === "rejected") throw v4.reason
        return out
      },
      catch: failure
    })
})

/**
 * A resolver answering from tables: `ptr` maps an address to its names, `addresses` a name to its
 * addresses; anything else is not found. `delayMs` delays every answer (a slow DNS server).
 */
export const resolverFake = (tables: {
  readonly ptr: Readonly<Record<string, ReadonlyArray<string>>>
  readonly addresses: Readonly<Record<string, ReadonlyArray<string>>>
  readonly delayMs?: () => number
}): ResolverShape => {
  const answer = <A>(value: A | undefined) =>
    Effect.suspend(() => {
      const wait = tables.delayMs?.() ?? 0
      const result = value === undefined ? Effect.fail(new ResolveError({ reason: "not_found" })) : Effect.succeed(value)
      return wait > 0 ? Effect.zipRight(Effect.sleep(wait), result) : result
    })
  return {
    reverse: (ip) => answer(tables.ptr[ip]),
    forward: (host) => answer(tables.addresses[host.toLowerCase()])
  }
}
