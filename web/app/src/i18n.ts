// The page's words in the player's language: English, Korean, Japanese or
// Simplified Chinese, chosen by the browser or by the player.
//
// Every line players read is an ICU message in src/i18n/<language>.json,
// compiled to its AST at build time (scripts/messages.mjs). English is in
// the page's first script; another language's catalog is fetched only by a
// page that speaks it. A message missing from a catalog says it in English.

import { IntlMessageFormat } from "intl-messageformat";
import english from "virtual:ttakji-messages/en";

/** A message's key: every key of en.json. */
export type MessageKey = keyof typeof import("./i18n/en.json");
type Catalog = typeof english;
type Values = Record<string, string | number>;

/** The languages offered, each with its own name for itself. */
export const LANGUAGES = [
  { code: "en", name: "English" },
  { code: "ko", name: "한국어" },
  { code: "ja", name: "日本語" },
  { code: "zh-Hans", name: "简体中文" },
] as const;
export type Language = (typeof LANGUAGES)[number]["code"];

const LANGUAGE_KEY = "ttakji.language";

const catalogs: Record<Exclude<Language, "en">, () => Promise<{ default: Catalog }>> = {
  ko: () => import("virtual:ttakji-messages/ko"),
  ja: () => import("virtual:ttakji-messages/ja"),
  "zh-Hans": () => import("virtual:ttakji-messages/zh-Hans"),
};

let language: Language = "en";
let catalog: Catalog = english;
let formats = new Map<string, IntlMessageFormat>();

function offered(code: string | null): Language | undefined {
  return LANGUAGES.find((l) => l.code === code)?.code;
}

/**
 * The player's choice, else the first of the browser's languages offered
 * here ("ko-KR" → Korean; any Chinese → Simplified Chinese), else English.
 */
export function preferredLanguage(): Language {
  const chosen = offered(localStorage.getItem(LANGUAGE_KEY));
  if (chosen) return chosen;
  const wanted = navigator.languages?.length ? navigator.languages : [navigator.language];
  for (const tag of wanted) {
    const base = tag.toLowerCase().split("-")[0];
    if (base === "zh") return "zh-Hans";
    const found = offered(base);
    if (found) return found;
  }
  return "en";
}

/** The language the page speaks now. */
export function currentLanguage(): Language {
  return language;
}

/** Speaks `code` from now on: loads its catalog, and sets `<html lang dir>`. */
export async function useLanguage(code: Language): Promise<void> {
  const next = code === "en" ? english : (await catalogs[code]()).default;
  language = code;
  catalog = next;
  formats = new Map();
  document.documentElement.lang = code;
  document.documentElement.dir = "ltr";
}

/** Speaks `code` and remembers it as the player's choice. */
export async function chooseLanguage(code: Language): Promise<void> {
  localStorage.setItem(LANGUAGE_KEY, code);
  await useLanguage(code);
}

/** Whether `key` names a message (for keys made at run time, such as a refusal's reason). */
export function hasMessage(key: string): key is MessageKey {
  return key in english;
}

/** The message `key` in the page's language, with `values` put in. */
export function t(key: MessageKey, values?: Values): string {
  const message = catalog[key] ?? english[key];
  if (typeof message === "string") return message;
  let format = formats.get(key);
  if (!format) {
    format = new IntlMessageFormat(message, language);
    formats.set(key, format);
  }
  return String(format.format(values));
}

/** A number as the page's language writes it (1,200; 6.5). */
export function formatNumber(n: number, options?: Intl.NumberFormatOptions): string {
  return new Intl.NumberFormat(language, options).format(n);
}
