/** The serializable dynamic provider of the analysisGroup resource: see `../shim.ts`. */
import { makeProvider } from "../shim";

export = makeProvider("analysisGroup");
