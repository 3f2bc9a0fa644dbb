/** Types of scripts/check-imports.mjs for the architecture test. */
export interface ImportRef { spec: string; typeOnly: boolean; dynamic: boolean }
export interface Arrow { from: string; to: string; why: string; known?: boolean }
export interface ImportReport {
  files: number;
  edges: { from: string; to: string; typeOnly: boolean; dynamic: boolean }[];
  cycles: string[][];
  allowedCycles: string[][];
  arrows: Arrow[];
  knownArrows: Arrow[];
}
export declare const MAY_IMPORT: Record<string, string[]>;
export declare const ALLOWED_CYCLES: { files: string[]; why: string }[];
export declare const KNOWN_ARROWS: { from: string; to: string; why: string }[];
export declare function parseImports(text: string, fileName?: string): ImportRef[];
export declare function roomOf(rel: string): string | null;
export declare function checkImports(root: string): ImportReport;
