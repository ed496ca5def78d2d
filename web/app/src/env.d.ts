// Stylesheets are imported for Vite to bundle.
declare module "*.css";

// A message catalog compiled at build time (scripts/messages.mjs): each
// key's ICU message as the parser's AST, or its text when it takes no values.
declare module "virtual:ttakji-messages/*" {
  const messages: Record<string, string | import("@formatjs/icu-messageformat-parser").MessageFormatElement[]>;
  export default messages;
}
