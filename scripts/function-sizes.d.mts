/** Types of scripts/function-sizes.mjs for the size-limit test. */
export interface FunctionSize { name: string; line: number; lines: number }
export interface Pending { functions: { file: string; name: string; lines?: number }[]; files: { file: string; lines?: number }[] }
export declare const MAX_FUNCTION: number;
export declare const MAX_FILE: number;
export declare const EXEMPT: Record<string, string>;
export declare function loadPending(root: string): Pending;
export declare function checkLimits(root: string, pending?: Pending): { violations: string[]; stale: string[]; functions: number; files: number };
export declare function functionSizes(text: string, fileName?: string): FunctionSize[];
export declare function measure(root: string): { functions: (FunctionSize & { file: string })[]; files: { file: string; lines: number }[] };
