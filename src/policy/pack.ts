/**
 * The policy pack `pulumi-voice-agent`, served to the Pulumi engine. Run only as a policy pack:
 * `pulumi preview --policy-pack node_modules/pulumi-voice-agent/policy` (docs/policy.md).
 */
import * as path from "node:path";
import { PolicyPack } from "@pulumi/policy";
import { policies } from "./index";

// `PolicyPack` takes the pack's version from `package.json` in the working directory, which the
// engine sets to the pack folder (`policy/`): the pack's version is this package's, so it reads the
// package's own manifest. Nothing else in the pack process depends on the working directory.
process.chdir(path.resolve(__dirname, "../.."));
new PolicyPack("pulumi-voice-agent", { policies });
