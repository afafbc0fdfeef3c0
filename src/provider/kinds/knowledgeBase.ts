/** The serializable dynamic provider of the knowledgeBase resource: see `../shim.ts`. */
import { makeProvider } from "../shim";

export = makeProvider("knowledgeBase");
