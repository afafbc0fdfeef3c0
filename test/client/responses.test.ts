/**
 * Answers as the client reads them: open enums accept values the reference does not list, an
 * answer too large is refused without being read whole, and a wrapped error keeps its cause.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConnectionError, ResponseTooLargeError, VoiceAgentClient } from "../../src/client";

let server: Server;
let url: string;
let answer: (path: string) => { status: number; body: string };

beforeAll(async () => {
  server = createServer((req, res) => {
    const a = answer(req.url ?? "");
    res.writeHead(a.status, { "content-type": "application/json", "x-request-id": "req_test" });
    res.end(a.body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const client = (extra: object = {}) =>
  new VoiceAgentClient({ baseUrl: url, apiKey: "va_secret_key_1", ...extra });
const widget = (status: string) =>
  JSON.stringify({
    id: "w1",
    agent_id: "a1",
    name: "W",
    allowed_origins: [],
    enabled_modes: { chat: true, talk: true },
    theme: {
      title: "T",
      subtitle: "S",
      welcome_message: "Hi",
      logo_url: null,
      accent_color: "#000000",
      launcher_text_color: "#000000",
      user_message_color: "#000000",
      user_message_text_color: "#000000",
      assistant_message_color: "#000000",
      assistant_message_text_color: "#000000",
      position: "bottom-right",
      launcher_label: "Talk",
      button_shape: "rounded",
      panel_radius: 1,
      message_radius: 1,
      launcher_radius: 1,
      icon_radius: 1,
      dock_icon_size: 1,
      launcher_padding_x: 1,
      launcher_padding_y: 1,
      widget_width: 1,
      widget_height: 1,
      show_inbound_number: false,
    },
    default_variables: {},
    status,
    public_key_prefix: "pk_",
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
  });

describe("response parsing", () => {
  test("a widget status the reference does not list (its paused value is not shown) is read, not refused", async () => {
    answer = () => ({ status: 200, body: widget("suspended_by_billing") });
    const w = await client().widget.get("a1");
    expect(w.status).toBe("suspended_by_billing");
  });

  test("number statuses are open too", async () => {
    answer = () => ({
      status: 200,
      body: JSON.stringify([
        {
          id: "n1",
          number: "+919800000001",
          carrier_status: "porting",
          lifecycle_status: "suspended",
          agent_id: null,
        },
      ]),
    });
    expect((await client().catalogue.numbers())[0]?.carrier_status).toBe("porting");
  });

  test("an answer larger than maxResponseBytes is refused, naming the limit", async () => {
    answer = () => ({ status: 200, body: widget("active").replace('"W"', `"${"x".repeat(200_000)}"`) });
    const err = await client({ maxResponseBytes: 100_000 })
      .widget.get("a1")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toContain("100000 bytes");
  });

  test("a connection failure keeps its cause, and never the key", async () => {
    const closed = new VoiceAgentClient({
      baseUrl: "http://127.0.0.1:9",
      apiKey: "va_secret_key_1",
      retryBudgetMs: 0,
    });
    const err = await closed.catalogue.models().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).cause).toBeInstanceOf(Error);
    expect(JSON.stringify(err)).not.toContain("va_secret_key_1");
  });
});
