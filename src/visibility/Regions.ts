/**
 * The main language (ISO-639-1) of a region (ISO-3166-1 alpha-2): the default `language` of
 * `/brands/{slug}/mentions` and `/industry/metrics` when only `region` is given (decisions.md).
 * Regions missing here fall back to the brand's primary language.
 */
const MAIN_LANGUAGE: Record<string, string> = {
  AD: "ca", AE: "ar", AF: "ps", AL: "sq", AM: "hy", AO: "pt", AR: "es", AT: "de", AU: "en", AZ: "az",
  BA: "bs", BD: "bn", BE: "nl", BG: "bg", BH: "ar", BO: "es", BR: "pt", BY: "be", CA: "en", CH: "de",
  CL: "es", CN: "zh", CO: "es", CR: "es", CU: "es", CY: "el", CZ: "cs", DE: "de", DK: "da", DO: "es",
  DZ: "ar", EC: "es", EE: "et", EG: "ar", ES: "es", ET: "am", FI: "fi", FR: "fr", GB: "en", GE: "ka",
  GH: "en", GR: "el", GT: "es", HK: "zh", HN: "es", HR: "hr", HU: "hu", ID: "id", IE: "en", IL: "he",
  IN: "hi", IQ: "ar", IR: "fa", IS: "is", IT: "it", JM: "en", JO: "ar", JP: "ja", KE: "sw", KR: "ko",
  KW: "ar", KZ: "kk", LB: "ar", LI: "de", LK: "si", LT: "lt", LU: "lb", LV: "lv", MA: "ar", MC: "fr",
  MD: "ro", ME: "sr", MK: "mk", MT: "mt", MX: "es", MY: "ms", NG: "en", NI: "es", NL: "nl", NO: "no",
  NP: "ne", NZ: "en", OM: "ar", PA: "es", PE: "es", PH: "tl", PK: "ur", PL: "pl", PR: "es", PT: "pt",
  PY: "es", QA: "ar", RO: "ro", RS: "sr", RU: "ru", SA: "ar", SE: "sv", SG: "en", SI: "sl", SK: "sk",
  SV: "es", SY: "ar", TH: "th", TN: "ar", TR: "tr", TW: "zh", TZ: "sw", UA: "uk", UG: "en", US: "en",
  UY: "es", UZ: "uz", VE: "es", VN: "vi", YE: "ar", ZA: "en", ZW: "en"
}

export const mainLanguageOf = (region: string): string | undefined => MAIN_LANGUAGE[region.toUpperCase()]

/**
 * Region and language a per-brand read is scoped to: the parameters when given; `region` alone
 * takes that region's main language (the brand's primary language for its own primary region, or
 * for a region not in the table); nothing given: the brand's primary region and language.
 */
export const resolveLocale = (
  brand: { readonly primaryRegion: string; readonly primaryLanguage: string },
  region: string | undefined,
  language: string | undefined
): { readonly region: string; readonly language: string } => {
  const r = region === undefined || region === "" ? brand.primaryRegion.toUpperCase() : region.toUpperCase()
  if (language !== undefined && language !== "") return { region: r, language: language.toLowerCase() }
  if (r === brand.primaryRegion.toUpperCase()) return { region: r, language: brand.primaryLanguage.toLowerCase() }
  return { region: r, language: mainLanguageOf(r) ?? brand.primaryLanguage.toLowerCase() }
}
