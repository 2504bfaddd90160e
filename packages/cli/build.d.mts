export declare const external: ReadonlyArray<string>
export declare const build: () => Promise<void>
