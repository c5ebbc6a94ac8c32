// Relay global ids: an object's global id is its own id, whose prefix (ids.ts) already names its
// kind, so ids stay what every surface has always shown and only the prefix is read to decode.
import { ID_PREFIX } from './ids.ts';

/** The kinds `node(id:)` / `nodes(ids:)` answer; accounts, keys and operator objects stay out. */
export const NODE_KINDS = ['batch', 'call', 'agent', 'promptVersion'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** Longer than any id we issue (prefix + 32 hex digits); longer input is never looked up. */
export const MAX_GLOBAL_ID_LENGTH = 64;
/** Ids one `nodes(ids:)` call may ask for. */
export const MAX_NODE_IDS = 100;

const ID_BODY = /^[0-9A-Za-z_-]+$/;

/** The kind a global id names, or null for anything malformed, too long or of another kind. */
export function nodeKindOf(globalId: string): NodeKind | null {
  if (globalId.length > MAX_GLOBAL_ID_LENGTH || !ID_BODY.test(globalId)) return null;
  for (const kind of NODE_KINDS) {
    const prefix = ID_PREFIX[kind];
    if (globalId.startsWith(prefix) && globalId.length > prefix.length) return kind;
  }
  return null;
}
