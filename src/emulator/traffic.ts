/**
 * Traffic at volume (`POST /_emulator/traffic`, docs/emulator.md "Traffic at volume"): many calls
 * to one agent at once, each finishing on the call clock like any other, with an outcome mix:
 * exact proportions interleaved evenly, or with a `seed` a seeded draw per call.
 */
import { z } from "zod";
import { CALL_ORIGINS } from "../spec";
import { OutcomeRule } from "./calls";
import { mulberry32 } from "./faults";

/** Most calls one traffic request places. */
export const MAX_TRAFFIC_CALLS = 5000;

/** One entry of the mix: its share of the calls and the outcome they finish with. */
export const TrafficMixEntry = z.strictObject({
  share: z.number().min(0).max(1),
  status: OutcomeRule.shape.status,
  duration_seconds: OutcomeRule.shape.duration_seconds,
  analysis: OutcomeRule.shape.analysis,
});
export type TrafficMixEntry = z.infer<typeof TrafficMixEntry>;

/** `POST /_emulator/traffic` body. */
export const TrafficBody = z
  .strictObject({
    agent_id: z.guid(),
    version: z.int().min(0).optional(),
    count: z.int().min(1).max(MAX_TRAFFIC_CALLS),
    origin: z.enum(CALL_ORIGINS).optional(),
    direction: z.enum(["inbound", "outbound", "web"]).optional(),
    mix: z.array(TrafficMixEntry).max(100).optional(),
    seed: z.int().optional(),
  })
  .superRefine((b, ctx) => {
    const total = (b.mix ?? []).reduce((sum, e) => sum + e.share, 0);
    // A little room for shares written as decimals (0.1 + 0.2 + 0.7).
    if (total > 1 + 1e-9)
      ctx.addIssue({
        code: "custom",
        path: ["mix"],
        message: `the shares add up to ${Math.round(total * 1e6) / 1e6}; they must add up to at most 1`,
      });
  });
export type TrafficBody = z.infer<typeof TrafficBody>;

/** The direction a traffic call takes when the body names none. */
export function trafficDirection(origin: string, direction?: "inbound" | "outbound" | "web") {
  if (direction) return direction;
  return origin === "widget" ? "web" : origin === "inbound" ? "inbound" : "outbound";
}

/**
 * Which mix entry each of `count` calls finishes with (an index into `mix`, or -1 for the default
 * outcome). With `seed`: each call draws from a seeded PRNG (mulberry32) and takes the entry its
 * draw falls in. Without: exactly round(share × count) calls per entry (entries in order, never more
 * than the calls left), interleaved evenly: call j goes to the outcome furthest behind its share at j.
 */
export function assignMix(mix: readonly { share: number }[], count: number, seed?: number): number[] {
  if (seed !== undefined) {
    const next = mulberry32(seed);
    return Array.from({ length: count }, () => {
      const u = next();
      let cumulative = 0;
      for (const [i, e] of mix.entries()) {
        cumulative += e.share;
        if (u < cumulative) return i;
      }
      return -1;
    });
  }
  const wanted: number[] = [];
  let left = count;
  for (const e of mix) {
    const n = Math.min(Math.round(e.share * count), left);
    wanted.push(n);
    left -= n;
  }
  // The default outcome is the last category.
  wanted.push(left);
  const given = wanted.map(() => 0);
  const out: number[] = [];
  for (let j = 0; j < count; j++) {
    let best = -1;
    let bestDeficit = 0;
    for (const [k, n] of wanted.entries()) {
      if ((given[k] as number) >= n) continue;
      const deficit = ((j + 1) * n) / count - (given[k] as number);
      if (best < 0 || deficit > bestDeficit) {
        best = k;
        bestDeficit = deficit;
      }
    }
    given[best] = (given[best] as number) + 1;
    out.push(best === mix.length ? -1 : best);
  }
  return out;
}
