/**
 * The one spelling of a request's path that every check at the edge reads (rate limits, the CSRF
 * guard, the body rules of the cookie surface): the path exactly as the router matches it, so no
 * other spelling of a route can reach its handler without its checks (docs/security.md).
 *
 * The router (find-my-way, as configured by @effect/platform) is case-insensitive, collapses
 * repeated slashes, decodes percent-escapes (all but those of reserved characters, `%25` kept),
 * ignores one trailing slash, and ends the path at `?`, `;` or `#`. This applies the same steps in
 * the same order, then lower-cases: `/API/v1/auth/login/`, `//api/v1/auth/login` and
 * `/%61pi/v1/auth/login;x` all give `/api/v1/auth/login`.
 */

const ABSOLUTE_FORM = /^https?:\/\/.*?\//

export const canonicalPath = (url: string): string => {
  let path = url
  if (path.charCodeAt(0) !== 47 /* / */) path = path.replace(ABSOLUTE_FORM, "/")
  path = path.replace(/\/\/+/g, "/")
  let end = path.length
  for (let i = 1; i < path.length; i++) {
    const code = path.charCodeAt(i)
    if (code === 37 /* % */) i += 2
    else if (code === 63 /* ? */ || code === 59 /* ; */ || code === 35 /* # */) {
      end = i
      break
    }
  }
  path = path.slice(0, end)
  if (path.includes("%")) {
    try {
      // decodeURI keeps the escapes of reserved characters; `%25` stays `%25`, as the router keeps it.
      path = decodeURI(path.replace(/%25/g, "%2525"))
    } catch {
      // A malformed escape: the router matches nothing either.
    }
  }
  if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1)
  return path.toLowerCase()
}
