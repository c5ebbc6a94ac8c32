import { builder } from '../builder.ts';

/** The Relay Node interface; also adds the `node` and `nodes` query fields (see builder.ts). */
export const NodeInterface = builder.nodeInterfaceRef();
