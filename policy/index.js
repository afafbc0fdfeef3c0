// The pulumi-voice-agent policy pack: `pulumi preview --policy-pack node_modules/pulumi-voice-agent/policy`.
// Its policies are compiled in ../dist/policy (sources: src/policy); see docs/policy.md.
require("../dist/policy/pack.js");
