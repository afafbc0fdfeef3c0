/**
 * The policy pack `pulumi-voice-agent`, served to the Pulumi engine. Run only as a policy pack:
 * `pulumi preview --policy-pack node_modules/pulumi-voice-agent/policy` (docs/policy.md).
 */
// First: loads @pulumi/policy without the whole @pulumi/pulumi SDK (lightSdk.ts says why).
import "./lightSdk";
import * as path from "node:path";
import { PolicyPack } from "@pulumi/policy";
import { policies } from "./index";
import { secretlint } from "./secrets";

// `PolicyPack` takes the pack's version from `package.json` in the working directory, which the
// engine sets to the pack folder (`policy/`): the pack's version is this package's, so it reads the
// package's own manifest. Nothing else in the pack process depends on the working directory.
process.chdir(path.resolve(__dirname, "../.."));
new PolicyPack("pulumi-voice-agent", { policies });
// Load the secret rules now, while the engine starts the program, not at the first Agent checked.
secretlint().catch(() => {
  // A failure to load surfaces, with its cause, when the first text is checked.
});
