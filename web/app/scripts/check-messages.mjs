// `npm run check`: every catalog has exactly the keys of en.json, and
// every message parses and takes the values its English takes.
import { catalogLanguages, checkCatalogs } from "./messages.mjs";

const problems = checkCatalogs();
if (problems.length) {
  console.error(`the message catalogs:\n${problems.join("\n")}`);
  process.exit(1);
}
console.log(`message catalogs agree: ${catalogLanguages().join(", ")}`);
