/**
 * The serializable dynamic provider of the agent resource: the module its states' `__provider` text
 * requires (`pulumi-voice-agent/provider/agent`, see `../providerText.ts`).
 */
import { providerOf } from "../registry";

export = providerOf("agent");
