/**
 * The serializable dynamic provider of the widget resource: the module its states' `__provider` text
 * requires (`pulumi-voice-agent/provider/widget`, see `../providerText.ts`).
 */
import { providerOf } from "../registry";

export = providerOf("widget");
