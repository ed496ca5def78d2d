import { defineConfig } from "vite";
import { messagesPlugin } from "./scripts/messages.mjs";

// The built page is embedded in the gateway's binary (services/gateway),
// which serves it at `/`; `npm run build` writes it to dist/.
export default defineConfig({
  base: "/",
  // The messages are parsed at build time (scripts/messages.mjs), so the
  // page takes intl-messageformat without its parser.
  plugins: [messagesPlugin()],
  resolve: {
    alias: [
      {
        find: /^@formatjs\/icu-messageformat-parser$/,
        replacement: "@formatjs/icu-messageformat-parser/no-parser.js",
      },
    ],
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // One script and one stylesheet: the page is small, and one request
    // each gets a board on screen soonest.
    cssCodeSplit: false,
    modulePreload: false,
    reportCompressedSize: true,
  },
  // The computer's engine runs in a module Worker (web/engine/worker.mjs),
  // loaded with its WebAssembly only when a game against the computer
  // thinking in the page starts or resumes; both get content-hashed names.
  worker: { format: "es" },
  server: {
    // `npm run dev` sends the API to a `ttakji serve` on its default port.
    proxy: { "/ttakji.v1.": "http://127.0.0.1:50051" },
  },
});
