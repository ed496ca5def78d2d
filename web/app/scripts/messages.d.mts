import type { Plugin } from "vite";
export const catalogDir: string;
export function readCatalog(language: string): Record<string, string>;
export function catalogLanguages(): string[];
export function checkCatalogs(): string[];
export function compileCatalog(language: string): Record<string, unknown>;
export function messagesPlugin(): Plugin;
