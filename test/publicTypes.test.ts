/**
 * A user's compiler errors name the public input types as Pulumi's own (`Input<...>`), never an
 * alias internal to this package: a program that passes a number where an id goes is told
 * `Input<Input<string>[]>`, which reads as `pulumi.Input`, not `In<In<string>[]>`. Checked against
 * the declarations the package ships (`dist/`, which scripts/setup.sh builds), as a user's compiler sees them.
 */
import { join } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";

const ROOT = join(__dirname, "..");

function diagnosticsOf(program: string): string {
  const file = join(ROOT, "test", "__types_probe__.ts");
  const host = ts.createCompilerHost({});
  const read = host.readFile.bind(host);
  host.readFile = (name) => (name === file ? program : read(name));
  const exists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || exists(name);
  const compiled = ts.createProgram(
    [file],
    {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.Node16,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
    },
    host,
  );
  return ts
    .getPreEmitDiagnostics(compiled)
    .filter((d) => d.file?.fileName === file)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    .join("\n");
}

test("a wrong input type names Pulumi's Input type, not an internal alias", () => {
  const said = diagnosticsOf(`
import * as va from "../dist";
new va.Agent("a", { name: "x", knowledgeBaseIds: [1] });
new va.Widget("w", { agentId: "a", allowedOrigins: [2] });
new va.KnowledgeBase("k", { name: "k", documents: 3 });
new va.AnalysisGroup("g", { name: "g", items: 4 });
`);
  expect(said).toMatch(/Input</);
  expect(said).not.toMatch(/\bIn</);
}, 60_000);
