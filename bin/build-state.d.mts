// Types of build-state.mjs (plain JavaScript: the bin runs it before any build exists).
export declare const SOURCE_DIRS: readonly string[];
export declare const SOURCE_FILES: readonly string[];
export declare const MANIFEST: string;
export declare function sourceStats(root: string): Record<string, [number, number]>;
export declare function buildIsFresh(root: string): boolean;
