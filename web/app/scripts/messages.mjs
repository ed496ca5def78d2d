// The page's message catalogs (src/i18n/<language>.json, one ICU message a
// key): checked against English and compiled to the parser's AST at build
// time, so the page ships no parser and a translator's slip fails the build
// (and `npm run check`) instead of showing a broken line to players.
import { parse, TYPE } from "@formatjs/icu-messageformat-parser";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

export const catalogDir = new URL("../src/i18n/", import.meta.url).pathname;

/** The catalog of `language` as written: key → ICU message. */
export function readCatalog(language) {
  return JSON.parse(readFileSync(join(catalogDir, `${language}.json`), "utf8"));
}

/** The languages that have a catalog ("en", "ko", …). */
export function catalogLanguages() {
  return readdirSync(catalogDir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

const parseMessage = (message) => parse(message, { ignoreTag: true });

/** The names of the values a message's AST takes ({count}, {point}, …). */
function argumentsOf(ast, into = new Set()) {
  for (const el of ast) {
    if (el.type === TYPE.literal || el.type === TYPE.pound) continue;
    into.add(el.value);
    if (el.options) for (const option of Object.values(el.options)) argumentsOf(option.value, into);
  }
  return into;
}

/**
 * What is wrong with the catalogs, one line each: a key missing or extra
 * against en.json, a message that does not parse, or one that takes other
 * values than its English. Empty when all is well.
 */
export function checkCatalogs() {
  const problems = [];
  const english = readCatalog("en");
  const englishArgs = {};
  for (const [key, message] of Object.entries(english)) {
    try {
      englishArgs[key] = [...argumentsOf(parseMessage(message))].sort().join(",");
    } catch (e) {
      problems.push(`en.json: ${key} does not parse: ${e.message}`);
    }
  }
  for (const language of catalogLanguages()) {
    let catalog;
    try {
      catalog = readCatalog(language);
    } catch (e) {
      problems.push(`${language}.json is not JSON: ${e.message}`);
      continue;
    }
    for (const key of Object.keys(english)) {
      if (!(key in catalog)) problems.push(`${language}.json: ${key} is missing`);
    }
    for (const [key, message] of Object.entries(catalog)) {
      if (!(key in english)) {
        problems.push(`${language}.json: ${key} is not in en.json`);
        continue;
      }
      if (typeof message !== "string") {
        problems.push(`${language}.json: ${key} is not a string`);
        continue;
      }
      try {
        const args = [...argumentsOf(parseMessage(message))].sort().join(",");
        if (language !== "en" && args !== englishArgs[key]) {
          problems.push(`${language}.json: ${key} takes {${args}}, English takes {${englishArgs[key]}}`);
        }
      } catch (e) {
        problems.push(`${language}.json: ${key} does not parse: ${e.message}`);
      }
    }
  }
  return problems;
}

/**
 * The catalog of `language` as the page loads it: key → the message's AST,
 * or the text itself for a message that takes no values.
 */
export function compileCatalog(language) {
  const compiled = {};
  for (const [key, message] of Object.entries(readCatalog(language))) {
    const ast = parseMessage(message);
    const literal = ast.every((el) => el.type === TYPE.literal);
    compiled[key] = literal ? ast.map((el) => el.value).join("") : ast;
  }
  return compiled;
}

const PREFIX = "virtual:ttakji-messages/";

/**
 * A Vite plugin: `import messages from "virtual:ttakji-messages/ko"` gives
 * the Korean catalog compiled; the build stops on any problem above.
 */
export function messagesPlugin() {
  return {
    name: "ttakji-messages",
    buildStart() {
      const problems = checkCatalogs();
      if (problems.length) this.error(`the message catalogs:\n${problems.join("\n")}`);
    },
    resolveId(id) {
      return id.startsWith(PREFIX) ? `\0${id}` : undefined;
    },
    load(id) {
      if (!id.startsWith(`\0${PREFIX}`)) return undefined;
      const language = id.slice(PREFIX.length + 1);
      this.addWatchFile(join(catalogDir, `${language}.json`));
      return `export default JSON.parse(${JSON.stringify(JSON.stringify(compileCatalog(language)))});`;
    },
  };
}
