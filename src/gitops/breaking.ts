/**
 * Breaks outside the service: the changes of a preview that are valid but break someone who is not
 * in the pull request. Each consequence has a stable id a pull request can acknowledge:
 *
 * - `analysis:<group>/<item>`: a key that calls publish in `custom_analysis[<group>][<item>]` is no
 *   longer published by some agent (the group renamed, deleted, disabled or detached, the item
 *   renamed, deleted or disabled, custom analysis switched off): dashboards and pipelines read it.
 * - `widget-key:<agent>`, `widget-origin:<agent>/<origin>`, `widget-status:<agent>`: the widget's
 *   key rotated (a changed `rotateKeyTrigger`, or an existing agent's widget adopted), an allowed
 *   origin removed, the widget paused (`status`, or the Widget resource removed): websites embed it.
 * - `variable:<agent>/<key>`, `transfer-number:<agent>/<number>`, `language:<agent>/<code>`,
 *   `knowledge-base:<agent>/<name>`: a custom variable, transfer number, language or knowledge base
 *   the live agent has is gone from the configuration that goes live.
 * - `off-air:<agent>`: the Agent resource is removed, which takes its live version off air.
 * - `rollback:<agent>`: a published version older than the agent's recorded live one is put back
 *   live (a revert, a pin on a new, renamed or kept AgentVersion, or `live: false` → `true` in place).
 *
 * `<agent>` is the Agent resource's name in the program; groups, items and knowledge bases are named
 * as the service names them. Nothing is listed that keeps what the service publishes (a description
 * edited, an item added), and a value known only after apply neither raises nor hides an alarm: what
 * cannot be known at preview is not listed. Agent-level changes count only when the agent's new
 * configuration goes live in this deploy (an AgentVersion of it publishes, live). The preview should
 * be run with `--show-sames`, so that unchanged groups and knowledge bases are named; without it, a
 * detached one is named by its id.
 */
import { pickWritten } from "../provider/managed";
import { UNKNOWN } from "../provider/unknowns";
import { AGENT_FIELDS } from "../resources/agent/projection";
import { code } from "./markdown";
import { isRecord, nameOf, num, type PreviewJson, type PreviewStep, typeOf, typeOfUrn } from "./preview";

/** One consequence: its stable id and, in Markdown, what breaks and for whom. */
export interface Breaking {
  id: string;
  what: string;
}

type Props = Record<string, unknown>;

/** A resource of the preview: what the stack last saw of it, and what the program declares now. */
interface Resource {
  urn: string;
  name: string;
  type: string;
  /** Its state before the deploy (outputs, which hold what was last read), or undefined when new. */
  old?: Props;
  /** Its declared inputs after the deploy, or undefined when it is removed. */
  new?: Props;
  /** Its id before the deploy. */
  oldId?: string;
  /** Whether the deploy gives it a new id (created or replaced): its id is then unknown at preview. */
  newId: boolean;
  /** The operations of its steps. */
  ops: string[];
  /** Per input, the URNs of the resources its new value comes from. */
  deps: Record<string, string[]>;
  /** The same for its value before the deploy. */
  oldDeps: Record<string, string[]>;
}

/**
 * An Agent's configuration in the spelling the service reads it back in (the agent's projection:
 * transfer numbers in E.164, ...), so that the state (as last read) and the inputs (as written)
 * compare equal when the service treats them as equal. Other resources' values are kept as they are.
 */
function canonical(type: string, props: Props | undefined): Props | undefined {
  return type === "Agent" && props ? { ...props, ...pickWritten(AGENT_FIELDS, props) } : props;
}

function dependencies(state: PreviewStep["oldState"]): Record<string, string[]> {
  return Object.fromEntries(Object.entries(state?.propertyDependencies ?? {}).map(([k, v]) => [k, v ?? []]));
}

/** The preview's resources by URN, with the lookups the checks share. */
class Stack {
  readonly resources: Resource[];

  constructor(steps: readonly PreviewStep[]) {
    const byUrn = new Map<string, Resource>();
    for (const step of steps) {
      const r = byUrn.get(step.urn) ?? {
        urn: step.urn,
        name: nameOf(step.urn),
        type: typeOf(step),
        newId: false,
        ops: [],
        deps: {},
        oldDeps: {},
      };
      r.ops.push(step.op);
      if (step.oldState && step.op !== "create") {
        r.old ??= canonical(r.type, step.oldState.outputs ?? step.oldState.inputs);
        r.oldId ??= step.oldState.id;
        if (Object.keys(r.oldDeps).length === 0) r.oldDeps = dependencies(step.oldState);
      }
      if (step.newState?.inputs && !step.op.startsWith("delete")) {
        r.new = canonical(r.type, step.newState.inputs);
        r.deps = dependencies(step.newState);
        if (["create", "replace", "create-replacement"].includes(step.op)) r.newId = true;
      }
      byUrn.set(step.urn, r);
    }
    this.resources = [...byUrn.values()];
  }

  of(type: string): Resource[] {
    return this.resources.filter((r) => r.type === type);
  }

  /** The Agent a Widget or an AgentVersion belongs to: by dependency, else by the agent id. */
  agentOf(r: Resource, side: "old" | "new"): Resource | undefined {
    const agents = this.of("Agent");
    const deps = side === "new" ? r.deps : r.oldDeps;
    // A dynamic resource depends on its agent through `agentId`, the plugin's AgentVersion through `agent`.
    const from = [...(deps.agentId ?? []), ...(deps.agent ?? [])];
    const byUrn = agents.find((a) => from.includes(a.urn));
    if (byUrn) return byUrn;
    const id = r[side]?.agentId;
    if (typeof id !== "string" || id === UNKNOWN) return undefined;
    return agents.find((a) => a.oldId === id || a.old?.agentId === id);
  }

  /**
   * A stable name for the agent of `r`: the Agent resource's name (from the dependency even when
   * the preview does not show the agent), else the agent's id.
   */
  agentName(r: Resource, side: "old" | "new"): string | undefined {
    const agent = this.agentOf(r, side);
    if (agent) return agent.name;
    const deps = side === "new" ? r.deps : r.oldDeps;
    const urn = [...(deps.agentId ?? []), ...(deps.agent ?? [])].find((u) => typeOfUrn(u) === "Agent");
    if (urn) return nameOf(urn);
    const id = r[side]?.agentId;
    return typeof id === "string" && id !== UNKNOWN ? id : undefined;
  }

  /**
   * The resources of `type` an agent's list of ids (`knowledgeBaseIds`, `analysisGroupIds`) names on
   * one side, or "unknown" when the list is not known at preview. An id of a resource outside the
   * preview stays as the id; an unknown element is the created or replaced resource it comes from.
   */
  attached(
    agent: Resource,
    field: string,
    type: string,
    side: "old" | "new",
  ): (Resource | string)[] | "unknown" {
    const list = agent[side]?.[field];
    if (list === undefined) return side === "new" ? this.attached(agent, field, type, "old") : [];
    if (!Array.isArray(list)) return "unknown";
    const ofType = this.of(type);
    const out: (Resource | string)[] = [];
    for (const id of list) {
      if (id === UNKNOWN) continue;
      if (typeof id !== "string") return "unknown";
      out.push(ofType.find((r) => r.oldId === id && !(side === "new" && r.newId)) ?? id);
    }
    if (list.includes(UNKNOWN)) {
      const from = agent.deps[field] ?? [];
      out.push(...ofType.filter((r) => r.newId && from.includes(r.urn)));
    }
    return out;
  }

  /**
   * Whether the agent's declared configuration goes live in this deploy: an AgentVersion of it
   * publishes its draft (not a pin) and puts it live (created, or updated in place with the agent's
   * new configuration hash). Otherwise the draft changes but calls do not.
   */
  goesLive(agent: Resource): boolean {
    return this.of("AgentVersion").some(
      (v) =>
        v.new !== undefined &&
        (v.newId || v.old?.contentHash !== v.new.contentHash) &&
        v.new.pinnedVersion === undefined &&
        v.new.live !== false &&
        this.agentOf(v, "new") === agent,
    );
  }
}

const known = (v: unknown): boolean => !JSON.stringify(v ?? null).includes(UNKNOWN);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== UNKNOWN ? v : undefined);
const removed = (before: readonly string[], after: readonly string[]) =>
  [...new Set(before)].filter((x) => !after.includes(x));

/** Finds every consequence of the preview, sorted by id. `reused`: AgentVersion URN → version put back. */
export function findBreaking(preview: PreviewJson, reused: ReadonlyMap<string, number>): Breaking[] {
  const stack = new Stack(preview.steps ?? []);
  const found = new Map<string, string>();
  const add = (id: string, what: string) => found.set(id, what);
  analysisKeys(stack, add);
  for (const widget of stack.of("Widget")) widgetChanges(stack, widget, add);
  for (const agent of stack.of("Agent")) agentChanges(stack, agent, add);
  for (const version of stack.of("AgentVersion")) rollback(stack, version, reused.get(version.urn), add);
  return [...found]
    .map(([id, what]) => ({ id, what }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

type Add = (id: string, what: string) => void;

// ---------------------------------------------------------------------------------------------
// Analysis: the keys calls publish in custom_analysis, per agent, before and after.

/** A published key: group name and item name as the service names them. */
interface Key {
  group: string;
  item: string;
  /** The AnalysisGroup resource it comes from, when in the preview. */
  from?: Resource;
  /**
   * A group the preview does not show (unchanged, and the preview ran without `--show-sames`):
   * `group` is its id and `item` is `*`, every key it publishes.
   */
  unnamed?: boolean;
}

/** How `pulumi preview` names what it does not change. */
const SHOW_SAMES = `the preview does not name it: run ${code("pulumi preview --json --show-sames")}`;

const keyId = (k: { group: string; item: string }) => `${k.group}/${k.item}`;
const keyText = (k: Key) =>
  k.unnamed
    ? `every key of the analysis group with id ${code(k.group)}`
    : code(`custom_analysis[${JSON.stringify(k.group)}][${JSON.stringify(k.item)}]`);

/**
 * The keys a group publishes on one side, or "unknown". An adopted group's items left unmanaged
 * are the items the stack read (`itemIds`); items unmanaged after the deploy stay as they were.
 */
function groupKeys(group: Resource | string, side: "old" | "new"): Key[] | "unknown" {
  if (typeof group === "string") return [{ group, item: "*", unnamed: true }];
  const g = group[side];
  if (!g) return [];
  const old = group.old ?? {};
  const name = g.name === undefined ? str(old.name) : str(g.name);
  if (name === undefined || !known(g.enabled)) return "unknown";
  if (g.enabled === false) return [];
  const items = g.items ?? (side === "new" ? old.items : undefined);
  if (items === undefined) {
    const ids = isRecord(old.itemIds) ? Object.keys(old.itemIds) : [];
    return ids.map((item) => ({ group: name, item, from: group }));
  }
  if (!Array.isArray(items) || !known(items.map((i) => (isRecord(i) ? [i.name, i.enabled] : i))))
    return "unknown";
  return items
    .filter((i): i is Props => isRecord(i) && typeof i.name === "string" && i.enabled !== false)
    .map((i) => ({ group: name, item: String(i.name), from: group }));
}

/**
 * The keys an agent's calls publish, or "unknown": before the deploy, or after it (`live`: the
 * agent's new configuration goes live; if not, its groups change but its attachments do not).
 */
function agentKeys(stack: Stack, agent: Resource, side: "old" | "new", live = false): Key[] | "unknown" {
  const configSide = side === "new" && live ? "new" : "old";
  const call = agent[configSide]?.call ?? agent.old?.call;
  if (isRecord(call) && !known(call.customAnalysisEnabled)) return "unknown";
  if (isRecord(call) && call.customAnalysisEnabled === false) return [];
  const groups = stack.attached(agent, "analysisGroupIds", "AnalysisGroup", configSide);
  if (groups === "unknown") return "unknown";
  const keys: Key[] = [];
  for (const group of groups) {
    const k = groupKeys(group, side);
    if (k === "unknown") return "unknown";
    keys.push(...k);
  }
  return keys;
}

/** Why a key is gone, and what replaces it when a rename shows which. */
function lostBecause(stack: Stack, key: Key, agent: Resource | undefined, after: Key[]): string {
  if (key.unnamed) return `nothing instead of %s (the group is detached; ${SHOW_SAMES})`;
  const group = key.from;
  const g = group?.new;
  if (group && !g) return "nothing instead of %s (the group is deleted)";
  if (g && agent) {
    const stillAttached = stack.attached(agent, "analysisGroupIds", "AnalysisGroup", "new");
    if (stillAttached !== "unknown" && !stillAttached.includes(group as Resource))
      return `nothing instead of %s (the group is detached from ${code(agent.name)})`;
  }
  if (g?.enabled === false) return "nothing instead of %s (the group is disabled)";
  if (agent?.new && isRecord(agent.new.call) && agent.new.call.customAnalysisEnabled === false)
    return "nothing instead of %s (custom analysis is switched off)";
  const mine = after.filter((k) => k.from === group);
  const renamed = mine.filter((k) => k.item === key.item && k.group !== key.group);
  if (renamed[0]) return `${keyText(renamed[0])} instead of %s (the group is renamed)`;
  const items = Array.isArray(g?.items) ? g.items.filter(isRecord) : [];
  if (items.some((i) => i.name === key.item && i.enabled === false))
    return "nothing instead of %s (the item is disabled)";
  const oldItems = Array.isArray(group?.old?.items) ? group.old.items.filter(isRecord) : [];
  const added = mine.filter((k) => !oldItems.some((i) => i.name === k.item));
  const gone = oldItems.filter((i) => !items.some((j) => j.name === i.name));
  if (added.length === 1 && gone.length === 1 && added[0])
    return `${keyText(added[0])} instead of %s (the item is renamed)`;
  return "nothing instead of %s (the item is deleted)";
}

/**
 * Per agent on air before and after (and, for adopted groups, the agents outside the stack they
 * may serve), the keys its calls published before and no longer publish after.
 */
function analysisKeys(stack: Stack, add: Add): void {
  const lost = new Map<string, { key: Key; who: string[]; how: string }>();
  const note = (key: Key, who: string, how: string) => {
    const entry = lost.get(keyId(key)) ?? { key, who: [], how };
    entry.who.push(who);
    lost.set(keyId(key), entry);
  };
  for (const agent of stack.of("Agent")) {
    if (!agent.old || !agent.new) continue; // new agents publish nothing yet; removed ones are off air
    const live = stack.goesLive(agent);
    const before = agentKeys(stack, agent, "old");
    const after = agentKeys(stack, agent, "new", live);
    if (before === "unknown" || after === "unknown") continue;
    for (const key of before) {
      if (after.some((k) => keyId(k) === keyId(key))) continue;
      note(key, `calls of ${code(agent.name)}`, lostBecause(stack, key, live ? agent : undefined, after));
    }
  }
  // An adopted group (the Default Analysis group, a group taken over by id) may run for agents
  // outside this stack: its own changes reach their calls too.
  for (const group of stack.of("AnalysisGroup")) {
    const declared = group.old ?? {};
    if (!group.old || (declared.adoptDefault !== true && typeof declared.adoptId !== "string")) continue;
    const before = groupKeys(group, "old");
    const after = groupKeys(group, "new");
    if (before === "unknown" || after === "unknown") continue;
    for (const key of before) {
      if (after.some((k) => keyId(k) === keyId(key))) continue;
      note(key, "calls of every agent the group runs for", lostBecause(stack, key, undefined, after));
    }
  }
  for (const [id, { key, who, how }] of lost) {
    const whom = [...new Set(who)].join(", ");
    add(
      `analysis:${id}`,
      `${whom} will publish ${how.replace("%s", keyText(key))}: dashboards and data pipelines that read the old key get nothing from them.`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Widget: its key, its allowed origins, its status.

function widgetChanges(stack: Stack, widget: Resource, add: Add): void {
  const before = widget.old;
  const after = widget.new;
  const oldAgent = before ? stack.agentName(widget, "old") : undefined;
  const newAgent = after ? stack.agentName(widget, "new") : undefined;
  const movesAway =
    before && after && oldAgent !== undefined && newAgent !== undefined && oldAgent !== newAgent;
  // Removed (or moved to another agent): the service cannot delete a widget, the provider pauses it.
  if (before && oldAgent && before.status !== "paused" && (!after || movesAway)) {
    add(
      `widget-status:${oldAgent}`,
      `the widget of ${code(oldAgent)} is paused (its Widget resource is removed): every website that embeds it stops showing it.`,
    );
  }
  if (!after || !newAgent) return;
  if (before && !movesAway) {
    if (before.status !== "paused" && after.status === "paused")
      add(
        `widget-status:${newAgent}`,
        `the widget of ${code(newAgent)} is paused: every website that embeds it stops showing it.`,
      );
    const trigger = [before.rotateKeyTrigger ?? null, after.rotateKeyTrigger ?? null];
    if (known(trigger[1]) && JSON.stringify(trigger[0]) !== JSON.stringify(trigger[1]))
      add(
        `widget-key:${newAgent}`,
        `the widget key of ${code(newAgent)} is rotated (${code("rotateKeyTrigger")} changed): every website that embeds the old key stops working until it embeds the new one.`,
      );
    const origins = after.allowedOrigins;
    if (Array.isArray(before.allowedOrigins) && Array.isArray(origins) && known(origins)) {
      for (const origin of removed(
        before.allowedOrigins.filter((o) => typeof o === "string"),
        origins,
      ))
        add(
          `widget-origin:${newAgent}/${origin}`,
          `${code(origin)} is no longer an allowed origin of the widget of ${code(newAgent)}: that website's embed stops working.`,
        );
    }
    return;
  }
  // Created, or moved: the provider adopts the agent's widget and rotates its key. Only an agent
  // that existed before has a key someone may have embedded.
  const agent = stack.agentOf(widget, "new");
  const existed = agent ? agent.old !== undefined : str(after.agentId) !== undefined;
  if (existed && after.rotateKeyOnCreate !== false && known(after.rotateKeyOnCreate))
    add(
      `widget-key:${newAgent}`,
      `the widget key of ${code(newAgent)} is rotated (the Widget resource adopts the agent's widget; ${code("rotateKeyOnCreate: false")} keeps the key): every website that embeds the old key stops working.`,
    );
}

// ---------------------------------------------------------------------------------------------
// Agent: what its live configuration loses, and going off air.

/** The custom variables' keys of an agent's configuration, or "unknown". */
function variables(config: Props): string[] | "unknown" {
  const list = config.variables;
  if (!Array.isArray(list) || !known(list.map((v) => (isRecord(v) ? v.key : v)))) return "unknown";
  return list.filter(isRecord).map((v) => String(v.key));
}

/** The transfer numbers an agent's calls transfer to (none when transferring is off), or "unknown". */
function transferNumbers(config: Props): string[] | "unknown" {
  const tools = config.builtinTools;
  const transfer = isRecord(tools) ? tools.transferCall : undefined;
  if (!isRecord(transfer) || !known(transfer.enabled)) return "unknown";
  if (transfer.enabled === false) return [];
  const list = transfer.numbers;
  if (!Array.isArray(list) || !known(list.map((n) => (isRecord(n) ? n.number : n)))) return "unknown";
  return list.filter(isRecord).map((n) => String(n.number));
}

/** The languages an agent speaks (default and additional), or "unknown". */
function languages(config: Props, old: Props): string[] | "unknown" {
  const now = isRecord(config.language) ? config.language : {};
  const was = isRecord(old.language) ? old.language : {};
  const main = now.default ?? was.default;
  const more = now.additional ?? was.additional ?? [];
  if (!known([main, more]) || !Array.isArray(more)) return "unknown";
  return [main, ...more].filter((l): l is string => typeof l === "string");
}

/**
 * Compares one list of an agent's configuration before and after; a field the program does not
 * declare after the deploy is not managed, so it keeps what the service has.
 */
function lost(agent: Resource, field: string, read: (config: Props) => string[] | "unknown"): string[] {
  const old = agent.old ?? {};
  if (old[field] === undefined || agent.new?.[field] === undefined) return [];
  const before = read(old);
  const after = read(agent.new);
  return before === "unknown" || after === "unknown" ? [] : removed(before, after);
}

function agentChanges(stack: Stack, agent: Resource, add: Add): void {
  const a = agent.name;
  if (agent.old && !agent.new && agent.ops.includes("delete")) {
    if (wasLive(stack, agent))
      add(
        `off-air:${a}`,
        `${code(a)} goes off air (its Agent resource is removed; the service keeps it with no live version): its phone numbers, widget and outbound calls stop answering.`,
      );
    return;
  }
  if (!agent.old || !agent.new || !stack.goesLive(agent)) return;
  const vars = lost(agent, "variables", variables);
  const [now, was] = [variables(agent.new), variables(agent.old)];
  const added = now !== "unknown" && was !== "unknown" ? removed(now, was) : [];
  for (const key of vars) {
    const instead =
      vars.length === 1 && added[0] && added.length === 1 ? ` (${code(added[0])} is added)` : "";
    add(
      `variable:${a}/${key}`,
      `${code(a)} no longer has the custom variable ${code(key)}${instead}: callers that pass it (calls' ${code("variables")}, widgets' ${code("defaultVariables")}) set nothing the agent reads.`,
    );
  }
  for (const number of lost(agent, "builtinTools", transferNumbers))
    add(
      `transfer-number:${a}/${number}`,
      `calls of ${code(a)} no longer transfer to ${code(number)}: the people at that number stop receiving its transfers.`,
    );
  for (const language of lost(agent, "language", (c) => languages(c, agent.old ?? {})))
    add(
      `language:${a}/${language}`,
      `${code(a)} no longer speaks ${code(language)}: callers who use it are not understood or answered in it.`,
    );
  const before = stack.attached(agent, "knowledgeBaseIds", "KnowledgeBase", "old");
  const after = stack.attached(agent, "knowledgeBaseIds", "KnowledgeBase", "new");
  if (before === "unknown" || after === "unknown") return;
  for (const kb of before) {
    if (after.includes(kb)) continue;
    const name = typeof kb === "string" ? kb : (str(kb.old?.name) ?? kb.name);
    const why = typeof kb === "string" ? ` (${SHOW_SAMES})` : kb.new ? "" : " (deleted)";
    add(
      `knowledge-base:${a}/${name}`,
      `${code(a)} no longer answers from the knowledge base ${code(name)}${why}: callers asking what it holds get no answer from it.`,
    );
  }
}

/** Whether the agent had a live version: as last read, or an AgentVersion of it put live. */
function wasLive(stack: Stack, agent: Resource): boolean {
  if (num(agent.old?.liveVersion) !== undefined) return true;
  return stack.of("AgentVersion").some((v) => v.old?.isLive === true && stack.agentOf(v, "old") === agent);
}

/**
 * The version of an AgentVersion's agent that is live before the deploy, as the stack recorded it:
 * an AgentVersion of that agent recorded live (it ran after the Agent, so it is the newest record),
 * else the Agent's recorded `liveVersion`. Undefined when the agent had none or it is not known.
 */
function liveBefore(stack: Stack, version: Resource): number | undefined {
  const agent = stack.agentOf(version, "new") ?? stack.agentOf(version, "old");
  const agentId = str(version.new?.agentId) ?? str(version.old?.agentId);
  const sameAgent = (v: Resource) =>
    agent ? stack.agentOf(v, "old") === agent : agentId !== undefined && v.old?.agentId === agentId;
  const recordedLive = stack.of("AgentVersion").find((v) => v.old?.isLive === true && sameAgent(v));
  return num(recordedLive?.old?.version) ?? num(agent?.old?.liveVersion);
}

/**
 * A published version put back live that is older than the live one: a pin (new, renamed, or
 * lowered in place), a revert found reused, or a version the stack kept put back live in place
 * (`live: false` → `true`, its configuration unchanged).
 */
function rollback(stack: Stack, version: Resource, reused: number | undefined, add: Add): void {
  const after = version.new;
  if (!after || after.live === false || !known(after.live) || !known(after.pinnedVersion)) return;
  const live = liveBefore(stack, version);
  if (live === undefined) return;
  const before = version.old;
  const backInPlace =
    !version.newId &&
    before?.isLive === false &&
    // A version taken off air since this stack put it live (`rolledBack`) stays off air unless
    // `reinstate` is raised.
    (before.rolledBack === undefined || Number(after.reinstate ?? 0) > Number(before.reinstate ?? 0)) &&
    after.pinnedVersion === undefined &&
    after.contentHash === before.contentHash
      ? num(before.version)
      : undefined;
  const back = num(after.pinnedVersion) ?? reused ?? backInPlace;
  if (back === undefined || back >= live) return;
  const a = stack.agentName(version, "new") ?? version.name;
  add(
    `rollback:${a}`,
    `${code(a)} goes back to version ${back} (live now: ${live}): callers get that version's configuration again, and whatever changed since is undone.`,
  );
}
