/**
 * `ingest inspect DIR` walks directories through symlinks. A symlink cycle used to end in
 * `internal error: ELOOP` (exit 1). Now each directory is walked once (a cycle ends), and a `.eval`
 * entry that cannot be resolved (a link to itself) is a one-line data error naming it (exit 3).
 */
import { describe, it, expect } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '../fixtures/inspect/make-logs.ts';
import { hashTree } from '../helpers/fixtures.ts';
import { runCli } from '../helpers/cli.ts';

describe('ingest inspect DIR with symlinks', () => {
  it('a directory cycle is walked once: the log inside is ingested once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-eloop-'));
    const logs = join(dir, 'logs');
    mkdirSync(join(logs, 'sub'), { recursive: true });
    copyFileSync(join(FIXTURES, 'log_streaming.eval'), join(logs, 'sub', 'a.eval'));
    symlinkSync(logs, join(logs, 'sub', 'back-to-top')); // logs/sub/back-to-top -> logs
    const r = runCli(['ingest', 'inspect', logs, '--traces', join(dir, 'traces'), '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.match(/would write run/g)).toHaveLength(1);
  }, 240_000);

  it('a .eval symlink to itself: one line naming it, exit 3, nothing written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-eloop-'));
    const logs = join(dir, 'logs');
    mkdirSync(logs);
    copyFileSync(join(FIXTURES, 'log_streaming.eval'), join(logs, 'a.eval'));
    symlinkSync(join(logs, 'loop.eval'), join(logs, 'loop.eval'));
    const traces = join(dir, 'traces');
    const r = runCli(['ingest', 'inspect', logs, '--traces', traces]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^standoff: .*loop\.eval: cannot read the file: symlink loop \(ELOOP\)$/m);
    expect(hashTree(traces)).toBe('absent');
  }, 240_000);
});
