/**
 * The serializable dynamic provider of the agentVersion resource: the module its states' `__provider` text
 * requires (`pulumi-voice-agent/provider/agentVersion`, see `../providerText.ts`).
 */
import { providerOf } from "../registry";

export = providerOf("agentVersion");
