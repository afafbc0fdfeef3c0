/**
 * The serializable dynamic provider of the analysisGroup resource: the module its states' `__provider` text
 * requires (`pulumi-voice-agent/provider/analysisGroup`, see `../providerText.ts`).
 */
import { providerOf } from "../registry";

export = providerOf("analysisGroup");
