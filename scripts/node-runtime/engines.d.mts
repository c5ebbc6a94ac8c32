export type Version = [major: number, minor: number, patch: number];
export function parseVersion(version: string): Version;
export function parseEngines(range: string): { op: '^' | '>=' | '='; version: Version }[];
export function satisfiesEngines(version: string, range: string): boolean;
