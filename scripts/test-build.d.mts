/** Types of scripts/test-build.mjs (imported by test/support/process.ts). */
export declare const root: string;
export declare function newBuildDir(prefix: string): string;
export declare function bundleForTests(options: { entryPoints: string[]; outdir: string }): Promise<void>;
export declare function bundledPath(outdir: string, entryPoint: string): string;
export declare function testNodeFlags(): string[];
