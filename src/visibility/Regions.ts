/**
 * The main language (ISO-639-1) of every region (all 249 officially assigned ISO-3166-1 alpha-2 codes):
 * the `language` that `/brands/{slug}/mentions` and `/industry/metrics` read when only `region` is given
 * (docs/visibility.md). A region's main language is its principal national or official language, or an
 * official one with an ISO-639-1 code where the principal one has none (Papiamento, Tok Pisin, ...).
 * A two-letter code that is not an assigned region (XK, UK, ...) falls back to the brand's primary language.
 */
const MAIN_LANGUAGE: Record<string, string> = {
  AD: "ca", AE: "ar", AF: "ps", AG: "en", AI: "en", AL: "sq", AM: "hy", AO: "pt", AQ: "en", AR: "es",
  AS: "sm", AT: "de", AU: "en", AW: "nl", AX: "sv", AZ: "az", BA: "bs", BB: "en", BD: "bn", BE: "nl",
  BF: "fr", BG: "bg", BH: "ar", BI: "rn", BJ: "fr", BL: "fr", BM: "en", BN: "ms", BO: "es", BQ: "nl",
  BR: "pt", BS: "en", BT: "dz", BV: "no", BW: "en", BY: "be", BZ: "en", CA: "en", CC: "ms", CD: "fr",
  CF: "sg", CG: "fr", CH: "de", CI: "fr", CK: "en", CL: "es", CM: "fr", CN: "zh", CO: "es", CR: "es",
  CU: "es", CV: "pt", CW: "nl", CX: "en", CY: "el", CZ: "cs", DE: "de", DJ: "fr", DK: "da", DM: "en",
  DO: "es", DZ: "ar", EC: "es", EE: "et", EG: "ar", EH: "ar", ER: "ti", ES: "es", ET: "am", FI: "fi",
  FJ: "en", FK: "en", FM: "en", FO: "fo", FR: "fr", GA: "fr", GB: "en", GD: "en", GE: "ka", GF: "fr",
  GG: "en", GH: "en", GI: "en", GL: "kl", GM: "en", GN: "fr", GP: "fr", GQ: "es", GR: "el", GS: "en",
  GT: "es", GU: "en", GW: "pt", GY: "en", HK: "zh", HM: "en", HN: "es", HR: "hr", HT: "ht", HU: "hu",
  ID: "id", IE: "en", IL: "he", IM: "en", IN: "hi", IO: "en", IQ: "ar", IR: "fa", IS: "is", IT: "it",
  JE: "en", JM: "en", JO: "ar", JP: "ja", KE: "sw", KG: "ky", KH: "km", KI: "en", KM: "ar", KN: "en",
  KP: "ko", KR: "ko", KW: "ar", KY: "en", KZ: "kk", LA: "lo", LB: "ar", LC: "en", LI: "de", LK: "si",
  LR: "en", LS: "st", LT: "lt", LU: "lb", LV: "lv", LY: "ar", MA: "ar", MC: "fr", MD: "ro", ME: "sr",
  MF: "fr", MG: "mg", MH: "en", MK: "mk", ML: "bm", MM: "my", MN: "mn", MO: "zh", MP: "en", MQ: "fr",
  MR: "ar", MS: "en", MT: "mt", MU: "fr", MV: "dv", MW: "en", MX: "es", MY: "ms", MZ: "pt", NA: "en",
  NC: "fr", NE: "ha", NF: "en", NG: "en", NI: "es", NL: "nl", NO: "no", NP: "ne", NR: "en", NU: "en",
  NZ: "en", OM: "ar", PA: "es", PE: "es", PF: "fr", PG: "en", PH: "tl", PK: "ur", PL: "pl", PM: "fr",
  PN: "en", PR: "es", PS: "ar", PT: "pt", PW: "en", PY: "es", QA: "ar", RE: "fr", RO: "ro", RS: "sr",
  RU: "ru", RW: "rw", SA: "ar", SB: "en", SC: "fr", SD: "ar", SE: "sv", SG: "en", SH: "en", SI: "sl",
  SJ: "no", SK: "sk", SL: "en", SM: "it", SN: "fr", SO: "so", SR: "nl", SS: "en", ST: "pt", SV: "es",
  SX: "en", SY: "ar", SZ: "en", TC: "en", TD: "ar", TF: "fr", TG: "fr", TH: "th", TJ: "tg", TK: "en",
  TL: "pt", TM: "tk", TN: "ar", TO: "to", TR: "tr", TT: "en", TV: "en", TW: "zh", TZ: "sw", UA: "uk",
  UG: "en", UM: "en", US: "en", UY: "es", UZ: "uz", VA: "it", VC: "en", VE: "es", VG: "en", VI: "en",
  VN: "vi", VU: "bi", WF: "fr", WS: "sm", YE: "ar", YT: "fr", ZA: "en", ZM: "en", ZW: "en"
}

export const mainLanguageOf = (region: string): string | undefined => MAIN_LANGUAGE[region.toUpperCase()]

/**
 * Region and language a per-brand read is scoped to (docs/visibility.md): both parameters as given;
 * `region` alone: that region and its main language (the table above; the brand's primary language for a
 * code missing there); `language` alone: the brand's primary region in that language; neither: the
 * brand's primary region and language.
 */
export const resolveLocale = (
  brand: { readonly primaryRegion: string; readonly primaryLanguage: string },
  region: string | undefined,
  language: string | undefined
): { readonly region: string; readonly language: string } => {
  const regionGiven = region !== undefined && region !== ""
  const r = regionGiven ? region.toUpperCase() : brand.primaryRegion.toUpperCase()
  if (language !== undefined && language !== "") return { region: r, language: language.toLowerCase() }
  if (!regionGiven) return { region: r, language: brand.primaryLanguage.toLowerCase() }
  return { region: r, language: mainLanguageOf(r) ?? brand.primaryLanguage.toLowerCase() }
}
