/**
 * A brand's slug made from its name, for the form that adds a brand and for a create request that
 * leaves `brand_slug` out (docs/decisions.md "Brands, competitors, prompts"). Pure and free of imports:
 * the web application bundles it, so the slug it shows while typing is the one the server would make.
 */

/** Same as SLUG_MAX_LENGTH of src/platform/Schemas.ts (a test holds them equal; no import keeps Effect out of the bundle). */
export const SLUG_MAX = 64

// Letters that Unicode does not decompose into a Latin letter and a mark.
const LATIN_EXTRA: Readonly<Record<string, string>> = {
  ß: "ss", ẞ: "ss", æ: "ae", Æ: "ae", œ: "oe", Œ: "oe", ø: "o", Ø: "o", đ: "d", Đ: "d", ð: "d", Ð: "d",
  ł: "l", Ł: "l", þ: "th", Þ: "th", ı: "i", ħ: "h", Ħ: "h"
}

/**
 * "Café Müller & Söhne" -> "cafe-muller-and-sohne": accents dropped, "&" read as "and", every other run of
 * characters outside a-z0-9 one hyphen, at most 64 characters. null when nothing is left (a name in CJK,
 * Cyrillic, Arabic... script only): the person then types the slug.
 */
export const slugFromName = (name: string): string | null => {
  const latin = name
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[^\u0000-\u007f]/g, (c) => LATIN_EXTRA[c] ?? c)
    .toLowerCase()
    .replace(/&/g, " and ")
  const slug = latin.replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")
  const cut = slug.slice(0, SLUG_MAX).replace(/-+$/, "")
  return cut === "" ? null : cut
}
