import type { Pin } from './choose.d.mts';

export interface PinnedNode {
  dir: string;
  bin: string;
}
export function readPins(dir?: string): Pin[];
export function cacheBase(env: NodeJS.ProcessEnv): string;
export function pinnedNode(pin: Pin, base: string): PinnedNode;
export function isInstalled(node: PinnedNode): boolean;
export function installPin(pin: Pin, node: PinnedNode, opts: { env: NodeJS.ProcessEnv; output?: 'pipe' | number }): void;
export function versionOf(nodePath: string): string | null;
