// The pulumi-voice-agent policy pack (docs/policy.md). Run it from where npm installed the package
// (`pulumi preview --policy-pack node_modules/pulumi-voice-agent/policy`), or publish this folder
// for an organisation (`pulumi policy publish`): it requires the package by its name, which its own
// package.json depends on. The policies themselves are `pulumi-voice-agent/policy`.
require("pulumi-voice-agent/policy/pack");
