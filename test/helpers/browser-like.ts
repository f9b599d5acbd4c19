/**
 * Test apps answer like the web application's own pages in a browser: a request that says nothing
 * of where it comes from (no Origin, no Sec-Fetch-Site) is marked same-origin, as a browser marks
 * the app's fetches. A test of the CSRF guard sends its own Origin or Sec-Fetch-Site (or uses a
 * real server process and a plain fetch, test/hardening/security.test.ts).
 */
export const browserLike = (headers: Headers): Headers => {
  if (!headers.has("origin") && !headers.has("sec-fetch-site")) headers.set("sec-fetch-site", "same-origin")
  return headers
}
