export declare const libraries: ReadonlyArray<string>
export declare const buildLibraries: () => Promise<void>
