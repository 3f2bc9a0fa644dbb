/** Types for scripts/build-wasm.mjs (imported by tests/stats/draw-kernels.test.ts, concentration-kernel.test.ts and tests/store/csv-lines.test.ts). */
export declare const WAT: string;
export declare const OUT: string;
export declare const CONCENTRATION_WAT: string;
export declare const CONCENTRATION_OUT: string;
export declare const CSV_LINES_WAT: string;
export declare const CSV_LINES_OUT: string;
export declare function assembleWat(watText: string, fileName?: string): Promise<Uint8Array>;
export declare function toWasmModuleSource(bytes: Uint8Array, o?: { wat?: string; name?: string; test?: string }): string;
