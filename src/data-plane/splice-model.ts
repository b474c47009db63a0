/** JSON's whitespace: space, tab, line feed, carriage return. */
const isJsonSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * The first `"model": "…"` member of a JSON text (the top-level one in both wires) set to `model`;
 * the text unchanged when it has none. A scan, not a regular expression: it runs on every relayed
 * answer.
 */
export const spliceFirstModel = (text: string, model: string): string => {
  for (let at = text.indexOf('"model"'); at !== -1; at = text.indexOf('"model"', at + 1)) {
    let i = at + 7;
    while (isJsonSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 58) continue;
    i++;
    while (isJsonSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 34) continue;
    let end = i + 1;
    for (; end < text.length; end++) {
      const c = text.charCodeAt(end);
      if (c === 92) end++;
      else if (c === 34) break;
    }
    if (end >= text.length) continue;
    return `${text.slice(0, at)}"model":${JSON.stringify(model)}${text.slice(end + 1)}`;
  }
  return text;
};
