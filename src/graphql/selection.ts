// What a document asks for beneath the field being resolved, read from its AST (fragments
// followed; @skip/@include ignored, so the answer errs towards "asked").
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

function fieldsOf(sets: readonly SelectionSetNode[], info: GraphQLResolveInfo, out: { name: string; set?: SelectionSetNode }[] = []) {
  for (const set of sets) {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) out.push({ name: s.name.value, set: s.selectionSet });
      else if (s.kind === Kind.INLINE_FRAGMENT) fieldsOf([s.selectionSet], info, out);
      else {
        const fragment = info.fragments[s.name.value];
        if (fragment) fieldsOf([fragment.selectionSet], info, out);
      }
    }
  }
  return out;
}

/** Whether the selection at `path` beneath the resolved field (e.g. `['items']`) names any of `names`. */
export function selectsAny(info: GraphQLResolveInfo, path: readonly string[], names: ReadonlySet<string>): boolean {
  let sets = info.fieldNodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
  for (const step of path) {
    sets = fieldsOf(sets, info).flatMap((f) => (f.name === step && f.set ? [f.set] : []));
  }
  return fieldsOf(sets, info).some((f) => names.has(f.name));
}
