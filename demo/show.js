// Prints what the demo put live, read back from the service through the package's client.
const { VoiceAgentClient, configFromPulumi } = require("pulumi-voice-agent/client");

async function main(agentId) {
  const client = new VoiceAgentClient(configFromPulumi(undefined));
  const live = await client.agents.get(agentId, { version: "live" });
  console.log(`Agent      ${live.name} (${live.id})`);
  console.log(
    `Live       version ${live.live_version}${live.label ? ` "${live.label}"` : ""}, revision ${live.document_revision}`,
  );
  console.log(
    `Voice      ${live.voice.provider}/${live.voice.voice_id}, model ${live.model.model}, language ${live.language.default}`,
  );
  console.log(`Greeting   ${live.greeting.message ?? "(none)"}`);
  console.log(`Knowledge  ${live.knowledge_base_ids.length} knowledge base(s) attached`);
  const widget = await client.widget.get(agentId);
  console.log(
    `Widget     ${widget.name}: ${widget.status}, key ${widget.public_key_prefix}…, origins ${widget.allowed_origins.join(", ")}`,
  );
  console.log("Versions");
  for await (const v of client.versions.list(agentId)) {
    console.log(
      `  v${v.version}  ${v.is_published ? "published" : "draft    "}  ${v.is_live ? "LIVE" : "    "}  ${v.label ?? ""}`,
    );
  }
  console.log("Deploy history");
  for await (const a of client.versions.activations(agentId)) {
    console.log(
      `  ${a.at}  ${a.action} v${a.version}${a.previous_version === null ? "" : ` (was v${a.previous_version})`}`,
    );
  }
}

main(process.argv[2]).catch((err) => {
  console.error(err.message);
  process.exit(1);
});
