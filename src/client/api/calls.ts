/**
 * `client.calls`: place a call, read one, list them, fetch a recording (spec: "Place a call",
 * "Call object"). Placing a call costs money: every place carries an `Idempotency-Key`, so a retry
 * after a lost answer is answered with the original call (`Idempotent-Replay: true`) instead of
 * dialling again; that is what makes it safe to retry like any idempotent request.
 */
import type { z } from "zod";
import {
  CallList,
  CallObject,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAY_HEADER,
  type PlaceCallBody,
  PlaceCallResponse,
} from "../../spec/calls";
import { type ClientCore, seg } from "../core";
import { type Page, PageIterator } from "../pagination";
import { send } from "../transport";

/** The call object (`GET /v1/calls/{id}`, list items, webhooks). */
export type CallT = z.infer<typeof CallObject>;
/** Body of a place-a-call request. */
export type PlaceCallInput = z.input<typeof PlaceCallBody>;

/** What placing a call answered. */
export interface PlacedCall {
  /** The call id. */
  id: string;
  /** Its status when placed (e.g. `started`). */
  status: string;
  /** True when the service answered an earlier request with the same key (`Idempotent-Replay: true`). */
  replayed: boolean;
}

/** Filters of the call list. */
export interface CallListOptions {
  /** `inbound`, `outbound` or `web` (an open set). */
  direction?: string;
  /** One origin or several (`api`, `widget`, `dashboard`, `batch`, `inbound`, `demo`): any of them. */
  origin?: string | readonly string[];
  /** Page size. */
  limit?: number;
}

/** A recording as the service serves it. */
export interface Recording {
  /** The `Content-Type` of the answer. */
  contentType: string;
  /** The recording's bytes. */
  data: Buffer;
}

const routes = {
  collection: () => "/v1/calls",
  one: (id: string) => `/v1/calls/${seg(id)}`,
  recording: (id: string) => `/v1/calls/${seg(id)}/recording`,
};

const headerValue = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Calls: `/v1/calls`. */
export class Calls {
  constructor(private readonly core: ClientCore) {}

  /**
   * `POST /v1/calls`: place a call (202). `idempotencyKey` (a UUID) names this distinct call: the
   * same key always answers the same call, so the request is retried after a lost answer or a 5xx
   * without dialling twice. Pin the call to a version with `version` or `agent_version_id` (not
   * both); with neither, the live version answers.
   */
  async place(body: PlaceCallInput, opts: { idempotencyKey: string }): Promise<PlacedCall> {
    if (!opts.idempotencyKey) throw new Error("calls.place: an idempotencyKey is required");
    const { data, headers } = await this.core.exchange(PlaceCallResponse, {
      method: "POST",
      path: routes.collection(),
      body,
      headers: { [IDEMPOTENCY_KEY_HEADER.toLowerCase()]: opts.idempotencyKey },
      retry: "idempotent",
    });
    const replay = headerValue(headers[IDEMPOTENT_REPLAY_HEADER.toLowerCase()]);
    return { id: data.id, status: data.status, replayed: replay?.toLowerCase() === "true" };
  }

  /** `GET /v1/calls/{id}`: the call object. An unknown id is a `NotFoundError` (`call_not_found`). */
  get(id: string): Promise<CallT> {
    return this.core.call(CallObject, { method: "GET", path: routes.one(id), retry: "idempotent" });
  }

  /** One page of `GET /v1/calls`, newest first. */
  listPage(opts: CallListOptions & { cursor?: string } = {}): Promise<Page<CallT>> {
    const origin = typeof opts.origin === "string" ? opts.origin : opts.origin?.join(",");
    return this.core.call(CallList, {
      method: "GET",
      path: routes.collection(),
      query: { cursor: opts.cursor, direction: opts.direction, origin, limit: opts.limit },
      retry: "idempotent",
    });
  }

  /** Every call matching the filters, newest first, page by page (`for await`, or `.toArray()`). */
  list(opts: CallListOptions = {}): PageIterator<CallT> {
    return new PageIterator((cursor) => this.listPage(cursor === undefined ? opts : { ...opts, cursor }));
  }

  /** `GET /v1/calls/{id}/recording`: the recording's bytes and type. */
  async recording(id: string): Promise<Recording> {
    const res = await send(this.core.config, {
      method: "GET",
      path: routes.recording(id),
      headers: { accept: "*/*" },
      retry: "idempotent",
      responseType: "bytes",
    });
    const data = Buffer.isBuffer(res.body) ? res.body : Buffer.from(String(res.body ?? ""));
    return { contentType: headerValue(res.headers["content-type"]) ?? "application/octet-stream", data };
  }
}
