/**
 * The JSON objects in a shell example's output, in order: curl prints each response with no
 * newline after it, so they run together (`{…}{…}`); text between them is skipped.
 */
export function jsonDocuments(text: string): any[] {
  const docs: any[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && depth > 0 && --depth === 0) docs.push(JSON.parse(text.slice(start, i + 1)));
  }
  return docs;
}
