/**
 * The one canonical form of an email address (docs/security.md "One spelling of an email"): the
 * sign-in rate limit's bucket, the account look-up and sign-up all use it, and users.email_key stores
 * it, so two spellings either are the same account and share one bucket, or reach different accounts.
 *
 * Steps: NFKC (full-width and other compatibility forms become plain letters), default-ignorable
 * characters removed (soft hyphen, zero-width joiners), white space trimmed, case folded (upper then
 * lower: dotless ı, final ς and ß fold like their plain letters), then every combining mark removed
 * after a canonical decomposition (U+0130 İ lower-cases to i + U+0307 in JavaScript; accents go the
 * same way), and NFKC again. The result is stable: canonicalEmail(canonicalEmail(x)) === canonicalEmail(x).
 */

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu
const MARK = /\p{M}/gu

/** At most this many characters are looked at: no address is longer (254), and the work stays bounded. */
export const EMAIL_SCAN_MAX = 1024

const fold = (text: string): string =>
  text
    .normalize("NFKC")
    .replace(IGNORABLE, "")
    .trim()
    .toUpperCase()
    .toLowerCase()
    .normalize("NFKD")
    .replace(MARK, "")
    .normalize("NFKC")

export const canonicalEmail = (email: string): string => {
  const once = fold(email.slice(0, EMAIL_SCAN_MAX))
  // A second pass settles the rare letter whose folding produces a foldable form.
  const twice = fold(once)
  return twice === once ? once : fold(twice)
}
