/** The serializable dynamic provider of the agent resource: see `../shim.ts`. */
import { makeProvider } from "../shim";

export = makeProvider("agent");
