/** The run's progress display on stderr: a bar on a terminal, else a line every 5% or 5 s. */
import cliProgress from 'cli-progress';
import type { ProgressMode } from './types.ts';

export class Progress {
  private bar: cliProgress.SingleBar | null = null;
  private done = 0;
  private errors = 0;
  private lastLine = 0;
  private readonly t0 = Date.now();
  private startDone = 0;
  constructor(
    private readonly mode: 'bar' | 'lines' | 'none',
    private readonly total: number,
    private readonly log: (line: string) => void,
  ) {}
  start(done: number, errors: number) {
    this.done = done;
    this.startDone = done;
    this.errors = errors;
    if (this.mode === 'bar') {
      this.bar = new cliProgress.SingleBar(
        {
          format: 'standoff run |{bar}| {value}/{total} episodes | {rate}/s | eta {eta_formatted} | errors {errors}',
          stream: process.stderr,
          hideCursor: true,
          clearOnComplete: false,
          etaBuffer: 50,
          fps: 10,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(this.total, done, { rate: '0.0', errors });
    } else if (this.mode === 'lines') {
      this.log(`standoff run: ${done}/${this.total} episodes${done ? ' (from the journal)' : ''}`);
    }
  }
  private rate(): number {
    const s = (Date.now() - this.t0) / 1000;
    return s > 0 ? (this.done - this.startDone) / s : 0;
  }
  tick(error: boolean) {
    this.done++;
    if (error) this.errors++;
    if (this.mode === 'bar') this.bar!.update(this.done, { rate: this.rate().toFixed(1), errors: this.errors });
    else if (this.mode === 'lines') {
      const now = Date.now();
      const step = Math.max(1, Math.floor(this.total / 20));
      if (this.done === this.total || this.done % step === 0 || now - this.lastLine > 5000) {
        this.lastLine = now;
        const r = this.rate();
        const eta = r > 0 ? Math.ceil((this.total - this.done) / r) : null;
        this.log(`standoff run: ${this.done}/${this.total} episodes, ${r.toFixed(1)}/s, eta ${eta === null ? '?' : `${eta}s`}, errors ${this.errors}`);
      }
    }
  }
  stop() {
    this.bar?.stop();
    this.bar = null;
  }
}

export function progressMode(mode: ProgressMode | undefined): 'bar' | 'lines' | 'none' {
  if (mode === 'bar' || mode === 'lines' || mode === 'none') return mode;
  return process.stderr.isTTY ? 'bar' : 'lines';
}
