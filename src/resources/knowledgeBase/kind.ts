/**
 * The serializable dynamic provider of the knowledgeBase resource: the module its states' `__provider` text
 * requires (`pulumi-voice-agent/provider/knowledgeBase`, see `../providerText.ts`).
 */
import { providerOf } from "../registry";

export = providerOf("knowledgeBase");
