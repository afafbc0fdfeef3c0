/**
 * Runs before every test file. The sources load the client and spec modules lazily with `require`
 * (src/provider/lazy.ts), which cannot load `.ts` files: hand over the test runner's instances.
 */
import * as client from "../src/client";
import { provideModules } from "../src/provider/lazy";
import * as spec from "../src/spec";

provideModules({ client, spec });
