/** The SDK's version; package.json says the same (a test checks). */
export const VERSION = "0.2.0";
