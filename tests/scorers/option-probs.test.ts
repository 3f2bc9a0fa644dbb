/**
 * The one option-probability reader (src/scorers/option-probs.ts), on the replies where the
 * runner's former reader (runner/probes.ts optionProbs) and the tested one (runner/protocol.ts)
 * disagreed. The runner stores this reader's output as `option_probs`, which calibration (ECE) reads.
 */
import { describe, it, expect } from 'vitest';
import { optionProbsFromLogprobs, tokenOption } from '../../src/scorers/option-probs.ts';
import { optionProbsFromLogprobs as viaProtocol } from '../../src/runner/protocol.ts';
import { DECISION_TOOLS } from '../../src/schema/scenario.ts';

const lp = Math.log;

describe('optionProbsFromLogprobs (the one reader)', () => {
  it('counts the chosen token even when the endpoint leaves it out of top_logprobs (was withdraw 0.75 vs escalate 0.6)', () => {
    const reply = [{ token: 'escalate', logprob: lp(0.6), top_logprobs: [{ token: 'withdraw', logprob: lp(0.3) }, { token: 'request', logprob: lp(0.1) }] }];
    const p = optionProbsFromLogprobs(reply)!;
    // The old runner reader read only the alternatives: withdraw 0.3 / 0.4 = 0.75.
    expect(p.escalate).toBeCloseTo(0.6, 12);
    expect(p.withdraw).toBeCloseTo(0.3, 12);
    expect(p.request_authorization).toBeCloseTo(0.1, 12);
    expect(p.issue_statement).toBe(0);
    expect(viaProtocol).toBe(optionProbsFromLogprobs);
  });

  it('a blank first token is skipped: the answer starts at the first non-blank token (was null from one reader, a value from the other)', () => {
    const reply = [
      { token: '\n', logprob: lp(0.9), top_logprobs: [{ token: '\n', logprob: lp(0.9) }, { token: ' ', logprob: lp(0.1) }] },
      { token: 'withdraw', logprob: lp(0.8), top_logprobs: [{ token: 'withdraw', logprob: lp(0.8) }, { token: 'escalate', logprob: lp(0.2) }] },
    ];
    const p = optionProbsFromLogprobs(reply)!;
    expect(p.withdraw).toBeCloseTo(0.8, 12);
    expect(p.escalate).toBeCloseTo(0.2, 12);
    expect(optionProbsFromLogprobs([{ token: ' ', logprob: 0, top_logprobs: [] }])).toBeNull();
  });

  it('one-letter tokens credit nothing ("I" is not issue_statement); 3+ letter unique prefixes and exact names do', () => {
    expect(tokenOption('I')).toBeNull();
    expect(tokenOption('w')).toBeNull();
    expect(tokenOption('req')).toBe('request_authorization');
    expect(tokenOption(' Request-Authorization')).toBe('request_authorization');
    expect(tokenOption('es')).toBeNull();
    const p = optionProbsFromLogprobs([{ token: 'I', logprob: lp(0.5), top_logprobs: [{ token: 'I', logprob: lp(0.5) }, { token: 'esc', logprob: lp(0.25) }, { token: 'With', logprob: lp(0.25) }] }])!;
    expect(p).toEqual({ escalate: 0.5, request_authorization: 0, withdraw: 0.5, issue_statement: 0 });
  });

  it('null without logprobs, without a non-blank token, or when nothing names an option; keys are the options in order', () => {
    expect(optionProbsFromLogprobs(null)).toBeNull();
    expect(optionProbsFromLogprobs([])).toBeNull();
    expect(optionProbsFromLogprobs([{ token: 'hmm', logprob: 0, top_logprobs: [] }])).toBeNull();
    expect(optionProbsFromLogprobs([{ token: 'escalate', logprob: -Infinity, top_logprobs: null }])).toBeNull();
    expect(Object.keys(optionProbsFromLogprobs([{ token: 'escalate', logprob: 0 }])!)).toEqual([...DECISION_TOOLS]);
  });
});
