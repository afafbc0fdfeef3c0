/** The serializable dynamic provider of the agentVersion resource: see `../shim.ts`. */
import { makeProvider } from "../shim";

export = makeProvider("agentVersion");
