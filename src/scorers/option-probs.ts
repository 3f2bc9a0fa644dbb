/**
 * The ONE reader of option probabilities from a reply's logprobs (the probe-mode decision
 * question asked with `logprobs: true, top_logprobs: k`). The runner stores its output as
 * `probe_decisions.option_probs`, and the report's calibration (ECE, reliability) reads that
 * column, so both use this definition. Pure; depends only on `src/schema`.
 *
 * The rule:
 * - The answer starts at the **first non-blank token** (a leading space or newline token is
 *   skipped: it carries no option).
 * - Its candidates are the chosen token and its `top_logprobs` alternatives (the chosen token
 *   counts even when the endpoint left it out of the alternatives; a token listed twice counts
 *   once, at its first logprob).
 * - Each candidate is folded ({@link foldReply}; `-` and spaces read as `_`) and credited to the
 *   option it names exactly, or to the unique option it is a prefix of when it has 3 or more
 *   characters (`req` -> `request_authorization`; `I` or `w` credit nothing: a one-letter token
 *   is far more often the start of a sentence than of an option).
 * - The credited mass is renormalised to sum to 1 over the options (options never seen get 0).
 * - `null` when there are no logprobs, no non-blank token, or no candidate credits an option.
 * The sim endpoint emits one token per option word, so there it is exact; for real tokenisers it
 * is a first-token approximation.
 */
import { DECISION_TOOLS } from '../schema/scenario.ts';
import { foldReply } from './fold-reply.ts';

/** The part of an OpenAI `choices[0].logprobs.content[i]` entry this reader uses. */
export interface TokenLogprobLike {
  token: string;
  logprob: number;
  top_logprobs?: ReadonlyArray<{ token: string; logprob: number }> | null;
}

const fold = (s: string) => foldReply(s).replace(/[\s-]+/g, '_');

/** The option a token names: exact, or a 3+ character prefix of exactly one option. */
export function tokenOption(token: string, options: readonly string[] = DECISION_TOOLS): string | null {
  const t = fold(token);
  if (t.length === 0) return null;
  const folded = options.map(fold);
  const exact = folded.indexOf(t);
  if (exact >= 0) return options[exact];
  if (t.length < 3) return null;
  const hits = options.filter((_, i) => folded[i].startsWith(t));
  return hits.length === 1 ? hits[0] : null;
}

/** Option probabilities from a reply's logprob content (see the module comment for the rule). */
export function optionProbsFromLogprobs(
  content: ReadonlyArray<TokenLogprobLike> | null | undefined,
  options: readonly string[] = DECISION_TOOLS,
): Record<string, number> | null {
  const first = content?.find((t) => t.token.trim() !== '');
  if (!first) return null;
  const candidates = new Map<string, number>();
  for (const c of [{ token: first.token, logprob: first.logprob }, ...(first.top_logprobs ?? [])]) {
    if (!candidates.has(c.token)) candidates.set(c.token, c.logprob);
  }
  const mass: Record<string, number> = Object.fromEntries(options.map((o) => [o, 0]));
  let total = 0;
  for (const [token, logprob] of candidates) {
    if (!Number.isFinite(logprob)) continue;
    const option = tokenOption(token, options);
    if (option === null) continue;
    const p = Math.exp(logprob);
    mass[option] += p;
    total += p;
  }
  if (total <= 0) return null;
  for (const o of options) mass[o] /= total;
  return mass;
}
