/** Reply folding shared by the strict reply parsers (runner/protocol.ts) and the option-probability reader. */

/**
 * The only normalisation the parsers apply: trim; drop surrounding quotes, backticks, markdown
 * emphasis (`*`, `_` at the ends), brackets and trailing sentence punctuation (`.`, `!`, `,`, `;`,
 * `:`); collapse internal whitespace; lower-case. Words are never added, removed or reinterpreted.
 */
export function foldReply(reply: string): string {
  let t = reply.trim();
  for (let prev = ''; prev !== t; ) {
    prev = t;
    t = t
      .replace(/^["'`*_([{<\s]+/, '')
      .replace(/["'`*_)\]}>.!,;:\s]+$/, '')
      .trim();
  }
  return t.replace(/\s+/g, ' ').toLowerCase();
}
