import type { Socket } from "bun"

/**
 * A TCP proxy in front of the PostgreSQL server that can make the connections that ran a LISTEN go
 * silent: their bytes are dropped both ways while the sockets stay open, as a peer that vanished
 * without closing them (a failover behind a proxy, a dead NAT entry) looks to the client.
 * New connections pass as before.
 */
export interface PgProxy {
  readonly port: number
  /** The same database URL, through the proxy. */
  readonly url: (databaseUrl: string) => string
  /** Silences every connection that has sent a LISTEN so far; returns how many. */
  readonly silenceListeners: () => number
  readonly close: () => void
}

interface Link {
  upstream: Socket<Link> | undefined
  downstream: Socket<Link> | undefined
  /** Client bytes that arrived before the server connection was open. */
  pending: Array<Uint8Array>
  listens: boolean
  silent: boolean
}

const LISTEN = Buffer.from("LISTEN ")

export const startPgProxy = async (target: { hostname: string; port: number }): Promise<PgProxy> => {
  const links = new Set<Link>()
  const server = Bun.listen<Link>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        const link: Link = { upstream: undefined, downstream: client, pending: [], listens: false, silent: false }
        client.data = link
        links.add(link)
        Bun.connect<Link>({
          hostname: target.hostname,
          port: target.port,
          data: link,
          socket: {
            open(upstream) {
              link.upstream = upstream
              for (const chunk of link.pending) upstream.write(chunk)
              link.pending = []
            },
            data(_upstream, chunk) {
              if (!link.silent) link.downstream?.write(chunk)
            },
            close() {
              if (!link.silent) link.downstream?.end()
            },
            error() {}
          }
        }).catch(() => client.end())
      },
      data(client, chunk) {
        const link = client.data
        if (link.silent) return
        if (!link.listens && Buffer.from(chunk).includes(LISTEN)) link.listens = true
        if (link.upstream === undefined) link.pending.push(new Uint8Array(chunk))
        else link.upstream.write(chunk)
      },
      close(client) {
        const link = client.data
        links.delete(link)
        if (!link.silent) link.upstream?.end()
      },
      error() {}
    }
  })
  return {
    port: server.port,
    url: (databaseUrl) => {
      const url = new URL(databaseUrl)
      url.hostname = "127.0.0.1"
      url.port = String(server.port)
      return url.toString()
    },
    silenceListeners: () => {
      let count = 0
      for (const link of links) {
        if (link.listens && !link.silent) {
          link.silent = true
          count++
        }
      }
      return count
    },
    close: () => {
      for (const link of links) {
        link.upstream?.end()
        link.downstream?.end()
      }
      server.stop(true)
    }
  }
}
