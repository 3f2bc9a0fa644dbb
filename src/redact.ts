/**
 * Secret scrubbing. API keys must never reach traces, journals, logs, error messages or reports.
 *
 * Three layers, applied to everything the runner stores or prints:
 *
 * 1. **Known secret values**: the values of every env var a config names in `api_key_env`, plus
 *    every env var whose NAME looks secret (`*API_KEY*`, `*_KEY`, `*TOKEN*`, `*SECRET*`,
 *    `*PASSWORD*`, `*CREDENTIAL*`; values of 8+ characters). Named key values count from
 *    {@link MIN_SECRET_LENGTH} characters. Every occurrence in
 *    a string is replaced by `[REDACTED]` (longest first, so a key that contains another is fully
 *    removed).
 * 2. **Secret-bearing fields**: in JSON objects, the values of keys named like `authorization`,
 *    `api_key`, `apiKey`, `x-api-key`, `password`, `secret`, `token`, `access_token`, `cookie`
 *    are replaced by `[REDACTED]` (the key *name* field `api_key_env` is kept: it holds a name).
 * 3. **Secret-looking text**: `Bearer <token>`, `Authorization: <value>`, `api_key=<value>`
 *    (query strings, JSON, headers), the user-info of a URL (`http://user:pass@host` becomes
 *    `http://[REDACTED]@host`, so a `base_url` never stores its credentials in `runs.config`)
 *    and well-known key shapes (`sk-...`, `nvapi-...`) are masked
 *    in error strings and config values (`text`, `error`, `value`, `json`). Trace rows (`row`)
 *    get layer 1 only: pattern masking could alter genuine transcript text.
 */

export const REDACTED = '[REDACTED]';
/** Shorter values are not treated as secrets (they would blank out ordinary words). */
export const MIN_SECRET_LENGTH = 6;

const SECRET_ENV_NAME = /(API_?KEY|_KEY$|^KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)/i;
const SECRET_FIELD = /^(authorization|proxy-authorization|api[-_]?key|apikey|x-api-key|access[-_]?token|refresh[-_]?token|token|secret|client[-_]?secret|password|passwd|cookie|set-cookie)$/i;

/** Env var names that hold non-secret values although their name matches (kept readable). */
const NOT_SECRET_ENV = new Set(['TERM_SESSION_ID', 'SSH_AUTH_SOCK', 'XAUTHORITY', 'GPG_AGENT_INFO', 'KEYTIMEOUT']);

/**
 * Collects secret values: the env vars named by `apiKeyEnvNames` (always, whatever their name) and
 * every env var whose name looks secret.
 */
export function collectSecrets(apiKeyEnvNames: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): string[] {
  const out = new Set<string>();
  const add = (v: string | undefined) => {
    if (typeof v !== 'string') return;
    const t = v.trim();
    if (t.length >= MIN_SECRET_LENGTH) {
      out.add(t);
      if (t !== v && v.length >= MIN_SECRET_LENGTH) out.add(v);
    }
  };
  for (const name of apiKeyEnvNames) add(env[name]);
  for (const [name, value] of Object.entries(env)) {
    if (SECRET_ENV_NAME.test(name) && !NOT_SECRET_ENV.has(name) && typeof value === 'string' && value.trim().length >= 8) add(value);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** Masks secret-looking text patterns (layer 3). */
export function maskSecretPatterns(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)(?!\[REDACTED\]@)[^\s/?#@"'<>]+@/gi, `$1${REDACTED}@`)
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`)
    .replace(/((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?!\[REDACTED\])[^"'\s,}]+(?:\s+[^"'\s,}]+)?/gi, `$1${REDACTED}`)
    .replace(/((?:api[-_]?key|apikey|x-api-key|access[-_]?token|client[-_]?secret)["']?\s*[:=]\s*["']?)(?!\[REDACTED\])[^"'\s&,}]+/gi, `$1${REDACTED}`)
    .replace(/\b(sk-(?:proj-|ant-)?|nvapi-|gsk_|xai-|hf_)[A-Za-z0-9_-]{12,}/g, REDACTED);
}

export interface Redactor {
  /** The secret values this redactor removes (never print them). */
  readonly secretCount: number;
  /** Removes known secret values and secret-looking patterns from a string (errors, config, free text). */
  text(s: string): string;
  /** Removes known secret values only (trace content, where patterns could alter real data). */
  values(s: string): string;
  /** `text` for nullable strings. */
  nullable(s: string | null | undefined): string | null;
  /** Deep copy of a JSON-able value with secret fields blanked and every string scrubbed. */
  value<T>(v: T): T;
  /** Redacted JSON text of a value. */
  json(v: unknown): string;
  /** Scrubs known secret values from every string field of a flat row (a trace row), returning a new row. */
  row<T extends object>(r: T): T;
  /** One-line, scrubbed message of any thrown value. */
  error(err: unknown): string;
}

/** Builds a redactor for a fixed set of secret values (see {@link collectSecrets}). */
export function createRedactor(secrets: readonly string[] = collectSecrets()): Redactor {
  const values = [...new Set(secrets.filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH))].sort(
    (a, b) => b.length - a.length,
  );
  const scrubValues = (s: string): string => {
    let out = s;
    for (const v of values) if (out.includes(v)) out = out.split(v).join(REDACTED);
    return out;
  };
  const text = (s: string): string => maskSecretPatterns(scrubValues(s));
  const value = <T>(v: T): T => {
    const walk = (x: unknown): unknown => {
      if (typeof x === 'string') return text(x);
      if (Array.isArray(x)) return x.map(walk);
      if (x !== null && typeof x === 'object') {
        const o: Record<string, unknown> = {};
        for (const [k, val] of Object.entries(x as Record<string, unknown>)) {
          o[k] = SECRET_FIELD.test(k) && val !== null && val !== undefined && val !== '' ? REDACTED : walk(val);
        }
        return o;
      }
      return x;
    };
    return walk(v) as T;
  };
  return {
    secretCount: values.length,
    text,
    values: scrubValues,
    nullable: (s) => (typeof s === 'string' ? text(s) : null),
    value,
    json: (v) => JSON.stringify(value(v)),
    row<T extends object>(r: T): T {
      const o: Record<string, unknown> = {};
      for (const [k, val] of Object.entries(r)) {
        if (typeof val === 'string') o[k] = scrubValues(val);
        else if (Array.isArray(val)) o[k] = val.map((x) => (typeof x === 'string' ? scrubValues(x) : x));
        else o[k] = val;
      }
      return o as T;
    },
    error(err: unknown): string {
      const e = err as { message?: unknown } | null;
      const msg = e && typeof e === 'object' && typeof e.message === 'string' ? e.message : String(err);
      return text(msg.replace(/\s*\n\s*/g, ' ').trim());
    },
  };
}

/** Convenience: a redactor over the current environment plus the named key variables. */
export function redactorFor(apiKeyEnvNames: readonly string[]): Redactor {
  return createRedactor(collectSecrets(apiKeyEnvNames));
}
