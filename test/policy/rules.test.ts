/**
 * The policies' rules without the engine: how values unknown at preview are read, field paths in
 * the program's spelling, masked excerpts, secret detection per field, stack-name globs and the
 * classification of widget origins.
 */

import { unknownCheckingProxy } from "@pulumi/policy";
import { describe, expect, test } from "vitest";
import { findSecrets, position, textFields } from "../../src/policy/secrets";
import { isProduction, stackOfUrn } from "../../src/policy/stacks";
import { fieldsAt, inputs, NOT_YET_KNOWN, valueAt } from "../../src/policy/values";
import { widgetOriginProblem } from "../../src/policy/widgetOrigins";

// How the engine sends a value unknown at preview (any type).
const UNKNOWN_SENTINEL = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

describe("values", () => {
  test("unknown values become NOT_YET_KNOWN instead of throwing, at any depth", () => {
    const props = inputs(
      unknownCheckingProxy({
        systemPrompt: UNKNOWN_SENTINEL,
        variables: [{ key: "a", defaultValue: "x" }, UNKNOWN_SENTINEL],
        call: { maxDurationMinutes: 12 },
      }),
    );
    expect(props.systemPrompt).toBe(NOT_YET_KNOWN);
    expect(valueAt(props, "call.maxDurationMinutes")).toBe(12);
    expect(fieldsAt(props, "variables[].defaultValue")).toEqual([
      { path: "variables[0].defaultValue", value: "x" },
      { path: "variables[1]", value: NOT_YET_KNOWN },
    ]);
  });

  test("paths are spelt as in the program, map keys included", () => {
    const props = inputs({
      builtinTools: { transferCall: { numbers: [{ number: "+1" }, { number: "+2" }] } },
      defaultVariables: { orderId: "1", "customer-name": "Ann" },
      greeting: null,
    });
    expect(fieldsAt(props, "builtinTools.transferCall.numbers[].number").map((f) => f.path)).toEqual([
      "builtinTools.transferCall.numbers[0].number",
      "builtinTools.transferCall.numbers[1].number",
    ]);
    expect(fieldsAt(props, "defaultVariables.{}").map((f) => f.path)).toEqual([
      "defaultVariables.orderId",
      'defaultVariables["customer-name"]',
    ]);
    expect(valueAt(props, "greeting.message")).toBeUndefined();
  });
});

describe("secrets", () => {
  test("every string is a text, at any depth, but ids, phone numbers and the provider's inputs", () => {
    const props = inputs(
      unknownCheckingProxy({
        systemPrompt: "p",
        builtinTools: {
          endCall: { message: { mode: "custom", text: "bye" } },
          transferCall: { numbers: [{ number: "+15550100" }] },
        },
        knowledgeBaseIds: ["kb_1"],
        __provider: "code",
        variables: [{ key: "k", defaultValue: "v" }],
        call: { maxDurationMinutes: 3 },
        greeting: UNKNOWN_SENTINEL,
      }),
    );
    expect(textFields(props).map((f) => f.path)).toEqual([
      "systemPrompt",
      "builtinTools.endCall.message.mode",
      "builtinTools.endCall.message.text",
      "variables[0].key",
      "variables[0].defaultValue",
    ]);
  });

  test("each credential is reported on its field with where it starts; plain text is not", async () => {
    const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const key = `sk-ant-api03-${"a".repeat(93)}AA`;
    const findings = await findSecrets([
      { path: "systemPrompt", value: "## Agent Purpose\nHelp with orders. Never share account numbers." },
      { path: "greeting.message", value: NOT_YET_KNOWN },
      { path: "variables[1].defaultValue", value: `use ${token} here` },
      {
        path: "builtinTools.endCall.message.text",
        value: `Bye. ${key} and https://bob:s3cret@example.com/x`,
      },
    ]);
    expect(findings.map((f) => [f.path, f.rule])).toEqual([
      ["variables[1].defaultValue", "github"],
      ["builtinTools.endCall.message.text", "anthropic"],
    ]);
    expect(findings.map((f) => f.at)).toEqual(["line 1, column 5", "line 1, column 6"]);
  });

  test("positions count lines and columns from 1", () => {
    expect(position("ab\ncd SECRET", 6)).toBe("line 2, column 4");
    expect(position("SECRET", 0)).toBe("line 1, column 1");
  });
});

describe("stacks", () => {
  test("the stack is read from the URN", () => {
    expect(stackOfUrn("urn:pulumi:prod-eu::voice::pulumi-nodejs:dynamic/voice-agent:Agent::support")).toBe(
      "prod-eu",
    );
    expect(() => stackOfUrn("support")).toThrow(/not a Pulumi resource URN/);
  });

  test("stack names match whatever their case", () => {
    for (const s of ["Prod", "PROD-EU", "Production"]) expect(isProduction(s)).toBe(true);
    expect(isProduction("Live-EU", ["live-*"])).toBe(true);
  });

  test("production by glob, default prod, prod-*, production, production-*", () => {
    for (const s of ["prod", "prod-eu", "production", "production-2"]) expect(isProduction(s)).toBe(true);
    for (const s of ["dev", "staging", "preprod", "prod2", "product"]) expect(isProduction(s)).toBe(false);
    expect(isProduction("live-eu", ["live-*"])).toBe(true);
    expect(isProduction("prod", ["live-*"])).toBe(false);
  });
});

describe("widget origins", () => {
  test("outside production: https, or http only for localhost and 127.0.0.1; no wildcard", () => {
    for (const o of [
      "https://www.example.com",
      "https://example.com:8443",
      "http://localhost:3000",
      "http://127.0.0.1",
    ]) {
      expect(widgetOriginProblem(o, false)).toBeUndefined();
    }
    expect(widgetOriginProblem("https://10.0.0.5", false)).toBeUndefined();
    expect(widgetOriginProblem("*", false)).toMatch(/wildcards are not allowed/);
    expect(widgetOriginProblem("https://*.example.com", false)).toMatch(/wildcards are not allowed/);
    expect(widgetOriginProblem("http://example.com", false)).toMatch(/must use https/);
    expect(widgetOriginProblem("http://192.168.1.4", false)).toMatch(/must use https/);
    expect(widgetOriginProblem("example.com", false)).toMatch(/not an origin/);
  });

  test("the service's own rules first: the exact origin, no path, no credentials", () => {
    expect(widgetOriginProblem("https://shop.example.com/cart", false)).toMatch(
      /refused by the service: must be the exact origin 'https:\/\/shop\.example\.com'/,
    );
    expect(widgetOriginProblem("https://bob:pw@shop.example.com", true)).toMatch(
      /must not carry credentials/,
    );
    expect(widgetOriginProblem("ftp://shop.example.com", false)).toMatch(/the scheme must be https/);
  });

  test("in production: no loopback, localhost or private-network origin", () => {
    expect(widgetOriginProblem("https://www.example.com", true)).toBeUndefined();
    expect(widgetOriginProblem("https://8.8.8.8", true)).toBeUndefined();
    for (const o of [
      "http://localhost:3000",
      "http://127.0.0.1",
      "https://app.localhost",
      "https://10.1.2.3",
      "https://172.20.0.1",
      "https://192.168.0.10",
      "https://169.254.1.1",
      "https://[::1]",
      "https://[fd00::1]",
    ]) {
      expect(widgetOriginProblem(o, true), o).toMatch(/loopback, localhost or private-network/);
    }
    expect(widgetOriginProblem("https://172.32.0.1", true)).toBeUndefined();
  });
});
