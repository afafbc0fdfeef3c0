/**
 * The policy pack `pulumi-voice-agent`, served to the Pulumi engine. Run only as a policy pack, from
 * the package's `policy/` folder (`pulumi preview --policy-pack node_modules/pulumi-voice-agent/policy`,
 * or that folder published with `pulumi policy publish`; docs/policy.md), whose `index.js` requires
 * this module as `pulumi-voice-agent/policy/pack`.
 */
// First: loads @pulumi/policy without the whole @pulumi/pulumi SDK (lightSdk.ts says why).
import "./lightSdk";
import { PolicyPack } from "@pulumi/policy";
import { policies } from "./index";
import { secretlint } from "./secrets";

// `PolicyPack` takes the pack's version from `package.json` in the working directory, which the
// engine sets to the pack folder: `policy/package.json`, which carries the package's version.
new PolicyPack("pulumi-voice-agent", { policies });
// Load the secret rules now, while the engine starts the program, not at the first Agent checked.
secretlint().catch(() => {
  // A failure to load surfaces, with its cause, when the first text is checked.
});
