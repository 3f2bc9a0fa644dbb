/**
 * Hostile names (issue 13's list): text that would inject Markdown structure, HTML, links,
 * remote images, spreadsheet formulas, bidi reordering or NUL bytes if any output passed it
 * through. `hostileBundle` is a valid run whose subject and judge names, scenario ids, suite,
 * notes, invalid reasons and messages are these strings.
 */
import type { RunBundle } from '../../src/schema/tables.ts';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleBundle } from './fixtures.ts';
import { FIXTURES, readMembers, writeZip } from '../fixtures/inspect/make-logs.ts';

export const HOSTILE = {
  /** A newline that would start a heading and a script line in REPORT.md. */
  newline: 'sim:x\n## PWNED heading\n<script>alert(1)</script>',
  script: '<script>alert("x")</script>',
  link: '[click](javascript:alert(1))',
  image: '![](http://127.0.0.1:9/track.png)',
  bidi: 'sim:\u202Egnp.exe',
  pipe: 'a|b|c',
  hyperlink: '=HYPERLINK("http://127.0.0.1:9/x","open")',
  cmd: "+cmd|' /C calc'!A0",
  at: '@SUM(1+1)',
  nul: 'nul\u0000byte',
  esc: 'esc\u001b[31mred',
  // SQL: a name that ends a string literal (values are bound as parameters, never written in)
  quote: "o'brien'); DROP TABLE episodes; --",
} as const;

/** One run: every text field a user's data can fill carries a hostile value. */
export function hostileBundle(runId = 'hostile'): RunBundle {
  const subjects = [HOSTILE.newline, HOSTILE.script, HOSTILE.link, HOSTILE.image, HOSTILE.bidi, HOSTILE.pipe, HOSTILE.hyperlink, HOSTILE.nul, HOSTILE.quote];
  const base = sampleBundle(runId, 3);
  const episodes = subjects.flatMap((subject, s) =>
    base.episodes!.map((e, i) => ({
      ...e,
      episode_id: `${subject}/${i + 1}`,
      subject_model: subject,
      subject_family: s % 2 === 0 ? HOSTILE.at : null,
      scenario_id: i === 0 ? HOSTILE.cmd : e.scenario_id,
      invalid_reason: e.invalid_reason === null ? null : HOSTILE.link + HOSTILE.esc,
    })),
  );
  const judges = [HOSTILE.script, HOSTILE.bidi, HOSTILE.quote];
  return {
    ...base,
    run: { ...base.run, suite: HOSTILE.image, notes: `${HOSTILE.newline} ${HOSTILE.nul}`, config: JSON.stringify({ subjects }) },
    episodes,
    messages: episodes.flatMap((e) => base.messages!.slice(0, 3).map((m) => ({ ...m, episode_id: e.episode_id, content: m.content === null ? null : `${HOSTILE.hyperlink} ${HOSTILE.nul}` }))),
    scores: episodes.map((e) => ({ run_id: runId, episode_id: e.episode_id, scorer: 'policy_compliant_action', value: e.status === 'valid' ? 1 : 0, answer: e.decision_tool, noanswer: false, explanation: HOSTILE.script })),
    judgments: episodes.flatMap((e) =>
      judges.map((j) => ({ run_id: runId, episode_id: e.episode_id, scorer: 'reasoning_action_alignment', judge_model: j, judge_family: HOSTILE.pipe, verdict: 'ALIGNED', value: 1, excluded_self: false, raw: HOSTILE.newline })),
    ),
    probe_answers: [],
    probe_decisions: [],
    aggregates: [],
  };
}

// --- issue 22: one hostile name through every ingest path -------------------------------------

/**
 * Issue 22's name: raw HTML, a newline that would start a heading, backticks (a run of one and of
 * three, to break out of any code span), an OSC title + clear-screen escape, NUL and U+202E.
 */
export const EVIL = '<img src=x onerror=alert(1)>\n## PWNED heading ` ``` \u001b]0;PWNED\u0007\u001b[2J nul\u0000x \u202Eevil';
/** A scorer / metric name: the same payload without a comma (lm-eval splits `metric,filter` there). */
export const EVIL_SCORER = 'sc<img src=x onerror=alert(1)>\n## PWNED scorer `` \u001b]0;PWNED\u0007 \u0000\u202Ex';
/** A URL with credentials in its user-info (issue 22 MEDIUM 4). */
export const CRED_URL = 'http://alice:s3cretP4ss@127.0.0.1:9/v1';
export const CRED_PASSWORD = 's3cretP4ss';

/** What no output may contain raw: the payloads' active parts. */
export const RAW_PAYLOAD = /<img|\u001b|\u0007|\u0000|\u202e|^#+ .*PWNED|s3cretP4ss/mu;

/** A CSV (as Python's csv module writes it) whose second subject is {@link EVIL}. */
export function writeHostileCsv(dir: string): string {
  const q = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const rows = ['model,item,score,endpoint'];
  for (const m of ['m1', EVIL]) for (let i = 0; i < 6; i++) rows.push([q(m), `i${i}`, String((i + m.length) % 2), q(CRED_URL)].join(','));
  const path = join(dir, 'hostile.csv');
  writeFileSync(path, rows.join('\r\n') + '\r\n');
  return path;
}

/**
 * A copy of the real Inspect log `log_streaming.eval` (tests/fixtures/inspect, from Inspect's own
 * tests) with `eval.model` = {@link EVIL}, the scorer `match` renamed {@link EVIL_SCORER} in every
 * member, and {@link CRED_URL} as `eval.model_base_url`, `model_args.url` and a nested
 * `model_args.client.endpoint`.
 */
export function writeHostileInspect(dir: string): string {
  const members = readMembers(join(FIXTURES, 'log_streaming.eval'));
  const walk = (x: unknown): unknown => {
    if (x === 'match') return EVIL_SCORER;
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k === 'match' ? EVIL_SCORER : k, walk(v)]));
    return x;
  };
  const out = members.map(([name, data]) => {
    if (!name.endsWith('.json')) return { name, data };
    const j = walk(JSON.parse(Buffer.from(data).toString('utf8'))) as Record<string, unknown>;
    const e = (name === 'header.json' || name === '_journal/start.json' ? j.eval : undefined) as Record<string, unknown> | undefined;
    if (e) {
      e.model = EVIL;
      e.model_base_url = CRED_URL;
      e.model_args = { url: CRED_URL, client: { endpoint: `see ${CRED_URL} for details` } };
    }
    return { name, data: JSON.stringify(j) };
  });
  return writeZip(join(dir, 'hostile.eval'), out);
}

/**
 * A copy of the real lm-eval output in tests/fixtures/lm-eval/asdiv-0.4.3 with `model_name` =
 * {@link EVIL}, the metric `acc` renamed {@link EVIL_SCORER} (results and samples), and
 * {@link CRED_URL} in `config.model_args` (`base_url=...`) and `config.endpoint`.
 */
export function writeHostileLmEval(dir: string): string {
  const src = join(import.meta.dirname, '..', 'fixtures', 'lm-eval', 'asdiv-0.4.3', 'meta-llama__Meta-Llama-3-8B-Instruct');
  const out = join(dir, 'lm-eval', 'hostile__model');
  mkdirSync(out, { recursive: true });
  for (const f of readdirSync(src)) {
    const text = readFileSync(join(src, f), 'utf8');
    if (f.startsWith('results_')) {
      const r = JSON.parse(text);
      r.model_name = EVIL;
      r.config.model_args = `pretrained=x,base_url=${CRED_URL}`;
      r.config.endpoint = CRED_URL;
      const re = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/^acc(_stderr)?,/, (_m, s) => `${EVIL_SCORER}${s ?? ''},`), v]));
      for (const t of Object.keys(r.results)) r.results[t] = re(r.results[t]);
      if (r.higher_is_better?.asdiv) r.higher_is_better.asdiv = { [EVIL_SCORER]: true };
      for (const m of r.configs?.asdiv?.metric_list ?? []) if (m.metric === 'acc') m.metric = EVIL_SCORER;
      writeFileSync(join(out, f), JSON.stringify(r));
    } else {
      const lines = text.split('\n').filter(Boolean).map((l) => {
        const s = JSON.parse(l);
        s[EVIL_SCORER] = s.acc;
        delete s.acc;
        return JSON.stringify(s);
      });
      writeFileSync(join(out, f), lines.join('\n') + '\n');
    }
  }
  return join(dir, 'lm-eval');
}
