/**
 * Rules that need no server state (rules "a"). Each returns a list of issues whose `field` is the
 * path of the offending value and whose message names it. Call them on the effective configuration
 * (the stored configuration with the patch applied: `applyAgentPatch`).
 */
import {
  type AgentBody,
  type AgentConfig,
  BUILTIN_TOOL_NAMES,
  EMOTIONS,
  type MessageObject,
  RESPONSE_EAGERNESS_VALUES,
} from "./agent";
import { type Issue, isE164, isIanaTimeZone, normalizeE164 } from "./common";
import { SYSTEM_VARIABLE_KEYS } from "./defaults";

const invalid = (field: string, message: string, code = "document_invalid"): Issue => ({
  field,
  code,
  message: `${field}: ${message}`,
});

const VARIABLE_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TOOL_TAG_RE = /<([A-Za-z_][A-Za-z0-9_]*)>/g;
const PLACEHOLDER_RE = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/** Tool names a prompt arms (`<tool_name>`), in order of first appearance. */
export function promptToolReferences(prompt: string | null | undefined): string[] {
  if (!prompt) return [];
  const seen = new Set<string>();
  for (const m of prompt.matchAll(TOOL_TAG_RE)) seen.add(m[1] as string);
  return [...seen];
}

/** Tools a configuration has: its enabled built-in tools plus the workspace's custom tools. */
export function availableTools(config: AgentConfig, customTools: readonly string[]): string[] {
  const builtin = BUILTIN_TOOL_NAMES.filter((n) => config.builtin_tools[n].enabled);
  return [...builtin, ...customTools];
}

/**
 * `prompt_tool_reference_invalid` for every `<tool>` in the system prompt that is not in `tools`
 * (built-in tools count only when enabled; see `availableTools`).
 */
export function checkPromptToolReferences(
  prompt: string | null | undefined,
  tools: readonly string[],
): Issue[] {
  const have = new Set(tools);
  return promptToolReferences(prompt)
    .filter((t) => !have.has(t))
    .map((t) =>
      invalid(
        "system_prompt",
        `names the tool <${t}> that this version does not have${
          (BUILTIN_TOOL_NAMES as readonly string[]).includes(t) ? ` (enable builtin_tools.${t} first)` : ""
        }`,
        "prompt_tool_reference_invalid",
      ),
    );
}

function checkMessage(m: MessageObject | undefined, field: string): Issue[] {
  if (m && m.mode === "custom" && !m.text) {
    return [invalid(`${field}.text`, "a custom line needs a non-empty text")];
  }
  return [];
}

/** The eleven platform lines of a configuration with their paths. */
export function platformLines(c: AgentConfig): [string, MessageObject][] {
  const bt = c.builtin_tools;
  return [
    ["builtin_tools.end_call.message", bt.end_call.message],
    ["builtin_tools.hold_call.acknowledgement_message", bt.hold_call.acknowledgement_message],
    ["builtin_tools.hold_call.follow_up_message", bt.hold_call.follow_up_message],
    ["builtin_tools.hold_call.timeout_message", bt.hold_call.timeout_message],
    ["builtin_tools.transfer_call.intro_message", bt.transfer_call.intro_message],
    ["builtin_tools.transfer_call.busy_message", bt.transfer_call.busy_message],
    ["conversation.silence_reminder.message", c.conversation.silence_reminder.message],
    ["call.end_on_silence_message", c.call.end_on_silence_message],
    ["call.max_duration_message", c.call.max_duration_message],
    ["inbound.business_hours_closed_message", c.inbound.business_hours_closed_message],
    ["inbound.fallback_message", c.inbound.fallback_message],
  ];
}

/** Variable rules: key format and uniqueness, system flags as read, system variables kept, prompt placeholders. */
export function checkVariables(c: AgentConfig): Issue[] {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  c.variables.forEach((v, i) => {
    const f = `variables[${i}]`;
    if (!VARIABLE_KEY_RE.test(v.key)) {
      issues.push(
        invalid(
          `${f}.key`,
          `'${v.key}' is not a valid variable key (letters, digits and _, not starting with a digit)`,
        ),
      );
    }
    if (seen.has(v.key)) issues.push(invalid(`${f}.key`, `variable '${v.key}' is declared twice`));
    seen.add(v.key);
    const system = (SYSTEM_VARIABLE_KEYS as readonly string[]).includes(v.key);
    if (v.system_defined !== system) {
      issues.push(invalid(`${f}.system_defined`, `must be sent back as read (${system}) for '${v.key}'`));
    }
    if (v.deletable !== !system) {
      issues.push(invalid(`${f}.deletable`, `must be sent back as read (${!system}) for '${v.key}'`));
    }
  });
  for (const key of SYSTEM_VARIABLE_KEYS) {
    if (!seen.has(key))
      issues.push(
        invalid("variables", `the system variable '${key}' is not deletable; send it back as read`),
      );
  }
  const custom = new Set(c.variables.filter((v) => !v.system_defined).map((v) => v.key));
  const texts: [string, string | null | undefined][] = [
    ["system_prompt", c.system_prompt],
    ["greeting.message", c.greeting.message],
  ];
  for (const [field, text] of texts) {
    if (!text) continue;
    for (const m of text.matchAll(PLACEHOLDER_RE)) {
      const ref = m[1] as string;
      if (ref.startsWith("custom.")) {
        const key = ref.slice("custom.".length);
        if (!custom.has(key))
          issues.push(invalid(field, `{{${ref}}} names no custom variable '${key}' in variables`));
      } else if (custom.has(ref)) {
        issues.push(invalid(field, `{{${ref}}} references a custom variable bare; write {{custom.${ref}}}`));
      }
    }
  }
  return issues;
}

/** Transfer targets: E.164 number, IANA timezone, non-empty hour window. */
export function checkTransferNumbers(c: AgentConfig): Issue[] {
  const issues: Issue[] = [];
  c.builtin_tools.transfer_call.numbers.forEach((n, i) => {
    const f = `builtin_tools.transfer_call.numbers[${i}]`;
    if (!isE164(n.number))
      issues.push(invalid(`${f}.number`, `'${n.number}' is not an E.164 number (+ and 7 to 15 digits)`));
    if (!isIanaTimeZone(n.timezone))
      issues.push(invalid(`${f}.timezone`, `'${n.timezone}' is not an IANA time zone name`));
    if (
      n.start_hour === n.end_hour ||
      (n.start_hour === 24 && n.end_hour === 0) ||
      (n.start_hour === 0 && n.end_hour === 0)
    ) {
      issues.push(
        invalid(
          `${f}.end_hour`,
          `the window ${n.start_hour}-${n.end_hour} is empty (start_hour must differ from end_hour)`,
        ),
      );
    }
  });
  return issues;
}

/** Memory: keys unique, `enum_values` only on `string` fields, no `widget` channel. */
export function checkMemory(c: AgentConfig): Issue[] {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  c.memory.fields.forEach((fld, i) => {
    const f = `memory.fields[${i}]`;
    if (!VARIABLE_KEY_RE.test(fld.key)) issues.push(invalid(`${f}.key`, `'${fld.key}' is not a valid key`));
    if (seen.has(fld.key))
      issues.push(invalid(`${f}.key`, `memory field key '${fld.key}' is declared twice`));
    seen.add(fld.key);
    if (fld.enum_values && fld.enum_values.length > 0 && fld.type !== "string") {
      issues.push(
        invalid(
          `${f}.enum_values`,
          `enum_values is allowed only on a field whose type is 'string' (this one is '${fld.type}')`,
        ),
      );
    }
  });
  c.memory.channels.forEach((ch, i) => {
    if (ch === "widget" || ch === "web") {
      issues.push(invalid(`memory.channels[${i}]`, `'${ch}' conversations are never recorded in memory`));
    }
  });
  return issues;
}

/**
 * Every rule "a" on an effective configuration: value rules the schema also states (name and prompt
 * lengths, `response_eagerness`; reported with 422 types), hold seconds, transfer numbers, memory,
 * variables, emotion values, voice fallback completeness and provider, number formats, custom lines,
 * and (when `customTools` is given) prompt tool references. `patch`, the body that produced the
 * configuration, only chooses which field a same-provider voice fallback refusal names.
 */
export function checkAgentStatic(
  c: AgentConfig,
  opts: { customTools?: readonly string[]; patch?: AgentBody } = {},
): Issue[] {
  const issues: Issue[] = [];
  if (c.name.length < 1)
    issues.push(invalid("name", "String should have at least 1 character", "string_too_short"));
  if (c.name.length > 255)
    issues.push(invalid("name", "String should have at most 255 characters", "string_too_long"));
  if (c.system_prompt !== null && c.system_prompt.length > 65536) {
    issues.push(invalid("system_prompt", "String should have at most 65536 characters", "string_too_long"));
  }
  if (c.system_prompt !== null && c.system_prompt.length < 1) {
    issues.push(invalid("system_prompt", "String should have at least 1 character", "string_too_short"));
  }
  if (!(RESPONSE_EAGERNESS_VALUES as readonly number[]).includes(c.conversation.response_eagerness)) {
    issues.push(
      invalid("conversation.response_eagerness", "Input should be 1, 0.75, 0.5 or 0", "literal_error"),
    );
  }
  const hold = c.builtin_tools.hold_call;
  if (hold.follow_up_seconds >= hold.max_seconds) {
    issues.push(
      invalid(
        "builtin_tools.hold_call.follow_up_seconds",
        `the check-in (${hold.follow_up_seconds}s) must come before the hold ends (max_seconds ${hold.max_seconds}s)`,
      ),
    );
  }
  issues.push(...checkTransferNumbers(c), ...checkMemory(c), ...checkVariables(c));
  if (c.voice.emotion !== null && !(EMOTIONS as readonly string[]).includes(c.voice.emotion)) {
    issues.push(
      invalid(
        "voice.emotion",
        `'${c.voice.emotion}' is an emotion no provider speaks (one of ${EMOTIONS.join(", ")})`,
      ),
    );
  }
  for (const [field, fb] of [
    ["transcriber.fallback", c.transcriber.fallback],
    ["model.fallback", c.model.fallback],
  ] as const) {
    if (fb && !fb.model) issues.push(invalid(`${field}.model`, "a fallback names its model id"));
  }
  const vf = c.voice.fallback;
  if (vf) {
    if (!vf.provider)
      issues.push(invalid("voice.fallback.provider", "the voice fallback needs a provider and a voice_id"));
    if (!vf.voice_id)
      issues.push(
        invalid(
          "voice.fallback.voice_id",
          "the voice fallback needs a voice_id (changing its provider clears the old one)",
        ),
      );
    if (vf.provider && vf.provider === c.voice.provider) {
      const pv = opts.patch?.voice;
      const movedMain = !!pv && "provider" in pv && !("fallback" in pv);
      issues.push(
        movedMain
          ? invalid(
              "voice.provider",
              `'${vf.provider}' is the fallback's provider; the fallback must be on a different provider`,
            )
          : invalid(
              "voice.fallback.provider",
              `the fallback must be on a different provider than voice.provider ('${vf.provider}')`,
            ),
      );
    }
  }
  for (const key of ["inbound_phone", "inbound_whatsapp"] as const) {
    const n = c.numbers[key];
    if (n !== null && normalizeE164(n) === null)
      issues.push(invalid(`numbers.${key}`, `'${n}' is not a phone number`));
  }
  for (const [field, m] of platformLines(c)) issues.push(...checkMessage(m, field));
  if (opts.customTools)
    issues.push(...checkPromptToolReferences(c.system_prompt, availableTools(c, opts.customTools)));
  return issues;
}
