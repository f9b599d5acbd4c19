/**
 * Where sign-in and sign-up return to: the page a signed-out visitor asked for. Only a route of this
 * application (a hash "#/..."), never the sign-in pages themselves, never anything that could leave
 * the page (an absolute or protocol-relative URL, a script URL); anything else gives null (the Brands page).
 */
export const safeReturn = (value: string | null | undefined): string | null => {
  if (value == null || value.length > 2000) return null
  const hash = value.startsWith("#") ? value : `#${value}`
  // One hash route: "#/" then path characters, an optional query; no whitespace or control characters,
  // no second "#", no backslash (browsers read "\" as "/" in some URL positions).
  if (!/^#\/[^\s#\\]*$/.test(hash) || /[\u0000-\u001f\u007f]/.test(hash)) return null
  if (hash.startsWith("#//")) return null
  const route = hash.slice(2).split(/[/?]/)[0] ?? ""
  if (route === "signin" || route === "signup") return null
  return hash
}
