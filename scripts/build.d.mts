// Types of scripts/build.mjs for the TypeScript that imports it (tests/cli/build.test.ts).
export declare const WORKERS: Readonly<Record<string, string>>;
export declare const EXTERNAL: readonly string[];
export declare function build(options?: { quiet?: boolean }): Promise<void>;
