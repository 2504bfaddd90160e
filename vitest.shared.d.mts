export declare const sourceAliases: Readonly<Record<string, string>>
