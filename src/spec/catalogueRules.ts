/**
 * Rules that need the service catalogue and the workspace's holdings (rules "b"), the read-only
 * fields derived from the catalogue, and `blocked_reasons`.
 */
import type { AgentBody, AgentConfig } from "./agent";
import type { Catalogue, Holdings } from "./catalogue";
import { type Issue, normalizeE164 } from "./common";

const issue = (field: string, code: string, message: string): Issue => ({
  field,
  code,
  message: `${field}: ${message}`,
});

const list = (xs: readonly string[]): string => (xs.length ? xs.join(", ") : "none");

/** Languages an agent speaks: its default first, then the additional ones. */
export function configuredLanguages(c: AgentConfig): string[] {
  return [...new Set([c.language.default, ...c.language.additional])];
}

/** Options of the catalogue rules. */
export interface CatalogueRuleOptions {
  /**
   * The request body that produced the configuration. Used only to name the field a same-provider
   * fallback refusal points at: the main engine when the body moved it, the fallback otherwise.
   */
  patch?: AgentBody;
}

function engineRules(
  c: AgentConfig,
  kind: "transcriber" | "model",
  cat: Catalogue,
  opts: CatalogueRuleOptions,
): Issue[] {
  const issues: Issue[] = [];
  const primary = c.language.default;
  const langs = configuredLanguages(c);
  const rows =
    kind === "model"
      ? cat.models.map((m) => ({ id: m.id, provider: m.provider, retired: m.retired, languages: null }))
      : cat.transcribers.map((t) => ({
          id: t.id,
          provider: t.provider,
          retired: false,
          languages: t.languages,
        }));
  const main = rows.find((r) => r.id === c[kind].model);
  const catalogueName = kind === "model" ? "/v1/models" : "/v1/transcribers";
  if (!main) {
    issues.push(issue(`${kind}.model`, "document_invalid", `'${c[kind].model}' is not in ${catalogueName}`));
  } else {
    if (main.retired) issues.push(issue(`${kind}.model`, "document_invalid", `'${main.id}' is retired`));
    const missing = main.languages ? langs.filter((l) => !main.languages?.includes(l)) : [];
    if (missing.length) {
      issues.push(
        issue(`${kind}.model`, "document_invalid", `'${main.id}' does not support ${missing.join(", ")}`),
      );
    }
  }
  const fb = c[kind].fallback;
  if (fb?.model) {
    const row = rows.find((r) => r.id === fb.model);
    if (!row) {
      issues.push(
        issue(`${kind}.fallback.model`, "document_invalid", `'${fb.model}' is not in ${catalogueName}`),
      );
    } else {
      if (row.retired)
        issues.push(issue(`${kind}.fallback.model`, "document_invalid", `'${row.id}' is retired`));
      if (row.languages && !row.languages.includes(primary)) {
        issues.push(
          issue(
            `${kind}.fallback.model`,
            "document_invalid",
            `'${row.id}' cannot handle the primary language ${primary}`,
          ),
        );
      }
      if (main && row.provider === main.provider) {
        const patchPart = opts.patch?.[kind];
        const movedMain = !!patchPart && "model" in patchPart && !("fallback" in patchPart);
        const field = movedMain ? `${kind}.model` : `${kind}.fallback.model`;
        issues.push(
          issue(
            field,
            "document_invalid",
            `the fallback must be on a different provider than the main engine ('${row.provider}')`,
          ),
        );
      }
    }
  }
  return issues;
}

function voiceRules(c: AgentConfig, cat: Catalogue): Issue[] {
  const issues: Issue[] = [];
  const v = c.voice;
  const primary = c.language.default;
  const langs = configuredLanguages(c);
  const tts = cat.ttsCapabilities;
  const caps = tts[v.provider];
  const providers = Object.keys(tts);
  if (!caps) {
    issues.push(
      issue(
        "voice.provider",
        "voice_config_invalid",
        `'${v.provider}' is not a voice provider (one of ${list(providers)})`,
      ),
    );
  } else {
    const missing = langs.filter((l) => !caps.languages.includes(l));
    if (missing.length) {
      issues.push(
        issue("voice.provider", "voice_config_invalid", `'${v.provider}' cannot speak ${missing.join(", ")}`),
      );
    }
    const row = cat.voices.find((r) => r.provider === v.provider && r.voice_id === v.voice_id);
    if (!row || row.withdrawn || !row.languages.includes(primary)) {
      const why = !row
        ? "is not a voice of"
        : row.withdrawn
          ? "was withdrawn by"
          : `is not offered for ${primary} by`;
      issues.push(issue("voice.voice_id", "voice_not_found", `'${v.voice_id}' ${why} '${v.provider}'`));
    }
    if (v.speed !== null && v.speed !== 1 && !caps.supports_speed) {
      const takers = providers.filter((p) => tts[p]?.supports_speed);
      issues.push(
        issue(
          "voice.speed",
          "voice_config_invalid",
          `'${v.provider}' does not take speed; providers that do: ${list(takers)}`,
        ),
      );
    }
    if (v.emotion !== null && !caps.supports_emotion) {
      const takers = providers.filter((p) => tts[p]?.supports_emotion);
      issues.push(
        issue(
          "voice.emotion",
          "document_invalid",
          `'${v.provider}' cannot speak an emotion; providers that do: ${list(takers)}`,
        ),
      );
    }
  }
  const fb = v.fallback;
  if (fb?.provider) {
    const fcaps = tts[fb.provider];
    if (!fcaps) {
      issues.push(
        issue("voice.fallback.provider", "voice_config_invalid", `'${fb.provider}' is not a voice provider`),
      );
    } else if (!fcaps.languages.includes(primary)) {
      issues.push(
        issue(
          "voice.fallback.provider",
          "voice_config_invalid",
          `'${fb.provider}' cannot speak the primary language ${primary}, so the fallback could never be used`,
        ),
      );
    } else if (fb.voice_id) {
      const row = cat.voices.find((r) => r.provider === fb.provider && r.voice_id === fb.voice_id);
      if (!row || row.withdrawn || !row.languages.includes(primary)) {
        const why = !row
          ? "is not a voice of"
          : row.withdrawn
            ? "was withdrawn by"
            : `is not offered for ${primary} by`;
        issues.push(
          issue("voice.fallback.voice_id", "voice_not_found", `'${fb.voice_id}' ${why} '${fb.provider}'`),
        );
      }
    }
  }
  return issues;
}

function languageRules(c: AgentConfig, cat: Catalogue): Issue[] {
  const known = new Set(cat.languages.map((l) => l.code));
  const issues: Issue[] = [];
  if (!known.has(c.language.default)) {
    issues.push(
      issue("language.default", "document_invalid", `'${c.language.default}' is not in /v1/languages`),
    );
  }
  c.language.additional.forEach((l, i) => {
    if (!known.has(l))
      issues.push(issue(`language.additional[${i}]`, "document_invalid", `'${l}' is not in /v1/languages`));
  });
  return issues;
}

/** Attachments and numbers the workspace must hold (each skipped when that holding is not given). */
export function checkHoldings(c: AgentConfig, h: Holdings): Issue[] {
  const issues: Issue[] = [];
  const attached = (
    field: string,
    ids: readonly string[],
    held: readonly string[] | undefined,
    what: string,
  ) => {
    if (!held) return;
    const have = new Set(held);
    ids.forEach((id, i) => {
      if (!have.has(id))
        issues.push(
          issue(`${field}[${i}]`, "document_invalid", `${what} '${id}' is not held by this workspace`),
        );
    });
  };
  attached("knowledge_base_ids", c.knowledge_base_ids, h.knowledgeBaseIds, "knowledge base");
  attached("analysis_group_ids", c.analysis_group_ids, h.analysisGroupIds, "analysis group");
  if (h.numbers && c.numbers.inbound_phone !== null) {
    const n = normalizeE164(c.numbers.inbound_phone);
    const held = h.numbers.some((r) => r.number === n && r.lifecycle_status !== "released");
    if (n && !held)
      issues.push(
        issue("numbers.inbound_phone", "document_invalid", `${n} is not a number this workspace holds`),
      );
  }
  if (h.whatsappNumbers && c.numbers.inbound_whatsapp !== null) {
    const n = normalizeE164(c.numbers.inbound_whatsapp);
    if (n && !h.whatsappNumbers.some((r) => r.number === n)) {
      issues.push(
        issue(
          "numbers.inbound_whatsapp",
          "document_invalid",
          `${n} is not a WhatsApp number this workspace holds`,
        ),
      );
    }
  }
  const wa = c.builtin_tools.send_whatsapp_template;
  if (h.whatsappTemplates) {
    const approved = new Set(h.whatsappTemplates.filter((t) => t.status === "approved").map((t) => t.name));
    wa.allowed_templates.forEach((t, i) => {
      if (!approved.has(t)) {
        issues.push(
          issue(
            `builtin_tools.send_whatsapp_template.allowed_templates[${i}]`,
            "document_invalid",
            `'${t}' is not an approved template of this workspace`,
          ),
        );
      }
    });
  }
  if (
    h.whatsappNumbers &&
    wa.phone_number_id !== null &&
    !h.whatsappNumbers.some((r) => r.phone_number_id === wa.phone_number_id)
  ) {
    issues.push(
      issue(
        "builtin_tools.send_whatsapp_template.phone_number_id",
        "document_invalid",
        `'${wa.phone_number_id}' is not a WhatsApp number of this workspace`,
      ),
    );
  }
  return issues;
}

/**
 * Every rule "b": languages known, transcriber and model known, not retired, speaking the
 * configured languages, fallbacks on another provider; voice provider known and speaking every
 * configured language, voice offered for the primary language and not withdrawn, speed and emotion
 * support, voice fallback usable; and, when `holdings` is given, what the workspace must hold.
 */
export function checkAgentCatalogue(
  c: AgentConfig,
  cat: Catalogue,
  holdings: Holdings = {},
  opts: CatalogueRuleOptions = {},
): Issue[] {
  return [
    ...languageRules(c, cat),
    ...voiceRules(c, cat),
    ...engineRules(c, "transcriber", cat, opts),
    ...engineRules(c, "model", cat, opts),
    ...checkHoldings(c, holdings),
  ];
}

/**
 * Fills the read-only fields from the catalogue: `transcriber.provider`, `model.provider` and
 * their fallbacks' providers from the model ids; `voice.model` and `voice.fallback.model` from
 * the providers. Returns a new configuration.
 */
export function deriveReadOnly(c: AgentConfig, cat: Catalogue): AgentConfig {
  const out = structuredClone(c);
  const tProvider = (id: string) => cat.transcribers.find((t) => t.id === id)?.provider ?? null;
  const mProvider = (id: string) => cat.models.find((m) => m.id === id)?.provider ?? null;
  out.transcriber.provider = tProvider(out.transcriber.model);
  if (out.transcriber.fallback) out.transcriber.fallback.provider = tProvider(out.transcriber.fallback.model);
  out.model.provider = mProvider(out.model.model);
  if (out.model.fallback) out.model.fallback.provider = mProvider(out.model.fallback.model);
  out.voice.model = cat.ttsCapabilities[out.voice.provider]?.model ?? null;
  if (out.voice.fallback)
    out.voice.fallback.model = cat.ttsCapabilities[out.voice.fallback.provider]?.model ?? null;
  return out;
}

/**
 * Why a version cannot go live: a retired model (main or fallback), a withdrawn voice (main or
 * fallback), or a knowledge base that no longer exists (`existingKnowledgeBaseIds`). One sentence
 * per reason, naming the field and the value.
 */
export function blockedReasons(
  c: AgentConfig,
  cat: Catalogue,
  existingKnowledgeBaseIds?: ReadonlySet<string>,
): string[] {
  const reasons: string[] = [];
  const retired = (id: string) => cat.models.some((m) => m.id === id && m.retired);
  if (retired(c.model.model)) reasons.push(`model.model: '${c.model.model}' is retired`);
  if (c.model.fallback && retired(c.model.fallback.model)) {
    reasons.push(`model.fallback.model: '${c.model.fallback.model}' is retired`);
  }
  const withdrawn = (p: string, id: string) =>
    cat.voices.some((v) => v.provider === p && v.voice_id === id && v.withdrawn);
  if (withdrawn(c.voice.provider, c.voice.voice_id)) {
    reasons.push(`voice.voice_id: '${c.voice.voice_id}' of '${c.voice.provider}' was withdrawn`);
  }
  const vf = c.voice.fallback;
  if (vf && withdrawn(vf.provider, vf.voice_id)) {
    reasons.push(`voice.fallback.voice_id: '${vf.voice_id}' of '${vf.provider}' was withdrawn`);
  }
  if (existingKnowledgeBaseIds) {
    c.knowledge_base_ids.forEach((id, i) => {
      if (!existingKnowledgeBaseIds.has(id))
        reasons.push(`knowledge_base_ids[${i}]: knowledge base '${id}' was deleted`);
    });
  }
  return reasons;
}
