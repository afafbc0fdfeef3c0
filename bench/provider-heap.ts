/**
 * What the provider's handlers keep once a step is done: in one process (the emulator in it too),
 * create N agents with their AgentVersions through the compiled handlers, then read them all, and
 * print the heap after garbage collection at N = 50, 100, 200, 400. A handler that kept something
 * per resource would show as growth beyond the emulator's own records (about 10 KB per agent).
 *
 *   npm run build && node --expose-gc -r ts-node/register/transpile-only bench/provider-heap.ts
 */
import { VoiceAgentClient } from "../dist/client";
import { DEFAULT_API_KEY, startEmulator } from "../dist/emulator";
import { contextFor } from "../dist/provider/context";
import type { Props } from "../dist/provider/resource";
import { agentProvider } from "../dist/resources/agent/provider";
import { agentVersionProvider } from "../dist/resources/agentVersion/provider";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const heapMb = () => {
  gc();
  gc();
  return (process.memoryUsage().heapUsed / 1e6).toFixed(1);
};

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY, rateLimitPerMinute: 1e6 });
  const ctx = contextFor(client);
  const agents = agentProvider(ctx);
  const versions = agentVersionProvider(ctx);
  // What the engine holds (the states), kept alive here as the engine keeps them.
  const states: { agent: { id: string; outs: Props }; version: { id: string; outs: Props } }[] = [];
  console.log(`start: heap ${heapMb()} MB`);
  for (const n of [50, 100, 200, 400]) {
    while (states.length < n) {
      const i = states.length;
      const checked = await agents.check(
        {},
        {
          name: `Heap ${i}`,
          systemPrompt: `## Agent Purpose\nHelp. (agent ${i})`,
          language: { default: "en-IN" },
          model: { model: "gpt-4o-mini" },
          createMarker: `pulumi-voice-agent:create:${i.toString(16).padStart(32, "0")}`,
        },
      );
      const a = await agents.create(checked.inputs ?? {});
      const o = a.outs as Props;
      const v = await versions.create(
        (
          await versions.check(
            {},
            {
              agentId: a.id,
              contentHash: o.contentHash,
              draftVersion: o.draftVersion,
              documentRevision: o.documentRevision,
              draftPublished: o.draftPublished,
              draftHash: o.draftHash,
              latestVersion: o.latestVersion,
              knownUpTo: -1,
              live: true,
            },
          )
        ).inputs ?? {},
      );
      states.push({ agent: { id: a.id, outs: o }, version: { id: v.id, outs: v.outs as Props } });
    }
    const afterCreate = heapMb();
    await Promise.all(
      states.map((s) =>
        Promise.all([agents.read(s.agent.id, s.agent.outs), versions.read(s.version.id, s.version.outs)]),
      ),
    );
    console.log(
      `${n} agents: heap ${afterCreate} MB after the creates, ${heapMb()} MB after reading them all`,
    );
  }
  await emu.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
