import { ClientConfigError } from "./errors";

/** How to reach the service. Pass it at call time; the client never stores it in module state. */
export type ClientConfig = {
  /** e.g. `https://api.example.com`; plain http only for a loopback host. */
  baseUrl: string;
  /** Workspace API key, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Client-side pacing, shared by every client of the same base URL + key. Default 300. */
  rateLimitPerMinute?: number;
  /** Time allowed for one attempt (connect, headers and body). Default 30 000 ms. */
  timeoutMs?: number;
  /** Largest answer read, in bytes (default 16 MiB); a larger one is refused and not read further. */
  maxResponseBytes?: number;
  /** Total time one operation may spend retrying (backoff, `Retry-After`). Default 120 000 ms. */
  retryBudgetMs?: number;
  /** Sent as `User-Agent`. */
  userAgent?: string;
  /**
   * Aborted: no new attempt and no wait for a retry, and an attempt in flight is abandoned; the
   * request fails with a `ConnectionError` coded `ECANCELLED` (the engine's Cancel, Ctrl-C).
   */
  signal?: AbortSignal;
};

/** Default client-side pace: the service's documented 300 requests per minute per key. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 300;
/** Default time for one attempt. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Default total retry time of one operation. */
export const DEFAULT_RETRY_BUDGET_MS = 120_000;

/** Pulumi stack configuration keys the provider reads. */
export const CONFIG_KEYS = {
  baseUrl: "voice-agent:baseUrl",
  apiKey: "voice-agent:apiKey",
  rateLimitPerMinute: "voice-agent:rateLimitPerMinute",
} as const;

/** Environment fallbacks of {@link CONFIG_KEYS}. */
export const ENV_KEYS = {
  baseUrl: "VOICE_AGENT_BASE_URL",
  apiKey: "VOICE_AGENT_API_KEY",
  rateLimitPerMinute: "VOICE_AGENT_RATE_LIMIT",
} as const;

/** Anything with Pulumi `Config`'s `get`: a `new pulumi.Config("voice-agent")` or a plain lookup. */
export type ConfigSource = { get(key: string): string | undefined } | undefined;

function lookup(cfg: ConfigSource, qualified: string): string | undefined {
  if (!cfg) return undefined;
  const short = qualified.slice(qualified.indexOf(":") + 1);
  // A plain lookup knows the qualified name; `new pulumi.Config("voice-agent")` knows the short one.
  const v = cfg.get(qualified) ?? cfg.get(short);
  return v === undefined || v === null || String(v).trim() === "" ? undefined : String(v).trim();
}

/**
 * Build a {@link ClientConfig} from Pulumi stack configuration (`voice-agent:baseUrl`, secret
 * `voice-agent:apiKey`, optional `voice-agent:rateLimitPerMinute`), falling back to
 * `VOICE_AGENT_BASE_URL`, `VOICE_AGENT_API_KEY` and `VOICE_AGENT_RATE_LIMIT`.
 *
 * @throws {ClientConfigError} naming the missing key, or refusing a non-https, non-loopback URL.
 */
export function configFromPulumi(cfg: ConfigSource, env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const pick = (k: keyof typeof CONFIG_KEYS): string | undefined => {
    const fromEnv = env[ENV_KEYS[k]];
    return lookup(cfg, CONFIG_KEYS[k]) ?? (fromEnv?.trim() ? fromEnv.trim() : undefined);
  };
  const baseUrl = pick("baseUrl");
  if (!baseUrl) {
    throw new ClientConfigError(
      `missing configuration ${CONFIG_KEYS.baseUrl}: set it with \`pulumi config set ${CONFIG_KEYS.baseUrl} <url>\` ` +
        `or the ${ENV_KEYS.baseUrl} environment variable`,
    );
  }
  const apiKey = pick("apiKey");
  if (!apiKey) {
    throw new ClientConfigError(
      `missing configuration ${CONFIG_KEYS.apiKey}: set it with \`pulumi config set --secret ${CONFIG_KEYS.apiKey} <key>\` ` +
        `or the ${ENV_KEYS.apiKey} environment variable`,
    );
  }
  const config: ClientConfig = { baseUrl, apiKey };
  const rate = pick("rateLimitPerMinute");
  if (rate !== undefined) {
    const n = Number(rate);
    if (!Number.isInteger(n) || n < 1) {
      throw new ClientConfigError(
        `${CONFIG_KEYS.rateLimitPerMinute} (or ${ENV_KEYS.rateLimitPerMinute}) must be a positive integer, got "${rate}"`,
      );
    }
    config.rateLimitPerMinute = n;
  }
  validateConfig(config);
  return config;
}

/** True for `localhost`, 127.0.0.0/8 and `::1` (also IPv4-mapped `::ffff:127.x.x.x`). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  if (h === "localhost") return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)) return true;
  const bare = h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
  if (bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true;
  return /^::ffff:(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})$/.test(bare);
}

/**
 * Check a configuration; returns the parsed base URL.
 * @throws {ClientConfigError} for a missing key, a malformed URL, or plain http to a non-loopback host.
 */
export function validateConfig(config: ClientConfig): URL {
  if (!config || typeof config !== "object") throw new ClientConfigError("client configuration is missing");
  if (typeof config.apiKey !== "string" || config.apiKey.trim() === "") {
    throw new ClientConfigError(`missing configuration ${CONFIG_KEYS.apiKey} (or ${ENV_KEYS.apiKey})`);
  }
  if (
    /\s/.test(config.apiKey) ||
    [...config.apiKey].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)
  ) {
    throw new ClientConfigError(`${CONFIG_KEYS.apiKey} contains whitespace or control characters`);
  }
  if (typeof config.baseUrl !== "string" || config.baseUrl.trim() === "") {
    throw new ClientConfigError(`missing configuration ${CONFIG_KEYS.baseUrl} (or ${ENV_KEYS.baseUrl})`);
  }
  let url: URL;
  try {
    url = new URL(config.baseUrl);
  } catch {
    throw new ClientConfigError(`${CONFIG_KEYS.baseUrl} is not a valid URL: "${config.baseUrl}"`);
  }
  if (url.username || url.password) {
    throw new ClientConfigError(
      `${CONFIG_KEYS.baseUrl} must not carry credentials; use ${CONFIG_KEYS.apiKey}`,
    );
  }
  if (url.protocol === "http:") {
    if (!isLoopbackHost(url.hostname)) {
      throw new ClientConfigError(
        `${CONFIG_KEYS.baseUrl} must use https (plain http is allowed only for a loopback host such as ` +
          `localhost or 127.0.0.1), got ${url.origin}`,
      );
    }
  } else if (url.protocol !== "https:") {
    throw new ClientConfigError(`${CONFIG_KEYS.baseUrl} must be an https URL, got ${url.protocol}`);
  }
  if (url.search || url.hash) {
    throw new ClientConfigError(`${CONFIG_KEYS.baseUrl} must not have a query or fragment`);
  }
  for (const [k, v, min] of [
    ["rateLimitPerMinute", config.rateLimitPerMinute, 1],
    ["timeoutMs", config.timeoutMs, 1],
    ["maxResponseBytes", config.maxResponseBytes, 1],
    ["retryBudgetMs", config.retryBudgetMs, 0],
  ] as const) {
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < min)) {
      throw new ClientConfigError(`${k} must be a number >= ${min}, got ${String(v)}`);
    }
  }
  return url;
}
