/** The serializable dynamic provider of the widget resource: see `../shim.ts`. */
import { makeProvider } from "../shim";

export = makeProvider("widget");
