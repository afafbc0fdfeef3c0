/**
 * The modules of `src/` depend on each other one way: no circle of imports, and the provider core
 * (`src/provider/`) knows nothing of the resources above it. Read with the TypeScript compiler's
 * parser: every `import`/`export … from` (type-only ones included), every `import("…")` type and
 * every `require("…")` of a relative path is an edge. A `require` whose path is computed cannot be
 * followed, so it is refused too (the registry names each module literally).
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, test } from "vitest";

const ROOT = path.resolve(__dirname, "..");
const SRC = path.join(ROOT, "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** The `src/` file a relative specifier names, or undefined for a package or a file outside `src/`. */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, "index.ts")]) {
    if (candidate.startsWith(SRC) && candidate.endsWith(".ts") && files.has(candidate)) return candidate;
  }
  return undefined;
}

interface Graph {
  edges: Map<string, Set<string>>;
  /** `file: text` of each `require` whose path is not a string literal. */
  computed: string[];
}

function graph(list: readonly string[]): Graph {
  const edges = new Map<string, Set<string>>();
  const computed: string[] = [];
  for (const file of list) {
    const out = new Set<string>();
    const text = readFileSync(file, "utf8");
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const add = (spec: string) => {
      const target = resolve(file, spec);
      if (target) out.add(target);
    };
    const visit = (node: ts.Node): void => {
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        add(node.moduleSpecifier.text);
      } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
        const e = node.moduleReference.expression;
        if (ts.isStringLiteral(e)) add(e.text);
      } else if (ts.isImportTypeNode(node)) {
        const arg = node.argument;
        if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) add(arg.literal.text);
      } else if (
        ts.isCallExpression(node) &&
        ((ts.isIdentifier(node.expression) && node.expression.text === "require") ||
          node.expression.kind === ts.SyntaxKind.ImportKeyword)
      ) {
        const arg = node.arguments[0];
        if (arg && ts.isStringLiteralLike(arg)) add(arg.text);
        else if (arg && !ts.isStringLiteralLike(arg)) {
          // `require.resolve` is a different call; a computed `require(...)` hides an edge.
          computed.push(`${path.relative(ROOT, file)}: ${node.getText(sf)}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    edges.set(file, out);
  }
  return { edges, computed };
}

/** The strongly connected components of more than one file (or a file importing itself): circles. */
function circles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || edges.get(v)?.has(v)) found.push(scc.map((f) => path.relative(ROOT, f)).sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) connect(v);
  return found;
}

const files = new Set(sources(SRC));

describe("module dependencies", () => {
  const { edges, computed } = graph([...files]);

  test("no circle of imports in src/", () => {
    expect(circles(edges)).toEqual([]);
  });

  test("every require names its module (an edge this check can follow)", () => {
    expect(computed).toEqual([]);
  });

  test("the provider core imports nothing of the resources, the GitOps tools or the CLI", () => {
    const core = path.join(SRC, "provider") + path.sep;
    const above = ["resources", "gitops", "export", "cli", "policy", "index.ts"].map((d) =>
      path.join(SRC, d),
    );
    const wrong: string[] = [];
    for (const [from, tos] of edges) {
      if (!from.startsWith(core)) continue;
      for (const to of tos)
        if (above.some((a) => to === a || to.startsWith(a + path.sep)))
          wrong.push(`${path.relative(ROOT, from)} -> ${path.relative(ROOT, to)}`);
    }
    expect(wrong).toEqual([]);
  });

  test("the check sees a circle when there is one", () => {
    const a = path.join(SRC, "a.ts");
    const b = path.join(SRC, "b.ts");
    const c = path.join(SRC, "c.ts");
    const demo = new Map([
      [a, new Set([b])],
      [b, new Set([c])],
      [c, new Set([a])],
    ]);
    expect(circles(demo)).toEqual([["src/a.ts", "src/b.ts", "src/c.ts"]]);
    // And it reads the edges a circle is made of on today's files: the resources import the core.
    const agentVersion = path.join(SRC, "resources/agentVersion/provider.ts");
    expect([...(edges.get(agentVersion) ?? [])].map((f) => path.relative(ROOT, f))).toContain(
      "src/provider/managed.ts",
    );
  });
});
