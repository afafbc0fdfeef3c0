#!/usr/bin/env node
/**
 * Writes `<dist>/provider/kinds/<kind>.js` for each resource kind: an alias of
 * `<dist>/resources/<kind>/kind.js`. A stack deployed from a linked checkout before the registry
 * moved to `src/resources/` holds a provider text that requires `dist/provider/kinds/<kind>.js`
 * (by a path relative to the project folder); `refresh` and `destroy` load that text from the
 * state, so the file must exist. Run after every build:
 *
 *   node scripts/legacy-kinds.js [dist]
 */
const fs = require("node:fs");
const path = require("node:path");

const dist = path.resolve(process.argv[2] ?? "dist");
const kinds = fs
  .readdirSync(path.join(dist, "resources"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && fs.existsSync(path.join(dist, "resources", d.name, "kind.js")))
  .map((d) => d.name);
if (kinds.length === 0) throw new Error(`no resources/<kind>/kind.js under ${dist}: build first`);
fs.mkdirSync(path.join(dist, "provider", "kinds"), { recursive: true });
for (const kind of kinds) {
  fs.writeFileSync(
    path.join(dist, "provider", "kinds", `${kind}.js`),
    `// The provider text of stacks a linked checkout deployed before the registry moved to src/resources/ requires this path.\nmodule.exports = require("../../resources/${kind}/kind.js");\n`,
  );
}
