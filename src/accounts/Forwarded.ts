import { Context } from "effect"

/**
 * The account of a dashboard session, handed in process to a public read endpoint by its
 * cookie-authenticated twin (src/web/Twins.ts). It exists only inside the server: nothing a
 * client sends can set it, so the public surface still accepts API keys only from outside.
 */
export class ForwardedAccount extends Context.Tag("ForwardedAccount")<
  ForwardedAccount,
  { readonly accountId: number; readonly keyId: string }
>() {}
