/**
 * The stable create marker of a resource (program side): the same value for the same resource of
 * the same stack, every time the program runs, and a different one for any other resource, stack,
 * project or organization. A create carries it in the object it makes (an agent's V0 notes, the
 * description of a knowledge base or analysis group), so that when Pulumi runs the create again
 * after an interrupted `up`, the provider finds the object the killed attempt made and adopts it
 * instead of making a second one. See docs/reliability.md.
 */
import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import { CREATE_MARKER_PREFIX } from "../client/recovery";

/** The organization, or "" where the runtime has none (a program under test mocks without one). */
function organization(): string {
  try {
    return pulumi.getOrganization();
  } catch {
    return "";
  }
}

/**
 * `pulumi-voice-agent:create:<hash>` of the organization, project, stack, resource type, name, and
 * the parent's URN when there is one (two children of different parents may share a name).
 */
export function createMarker(
  type: string,
  name: string,
  opts: pulumi.CustomResourceOptions | undefined,
): pulumi.Input<string> {
  const marker = (parentUrn: string) =>
    `${CREATE_MARKER_PREFIX}${createHash("sha256")
      .update(JSON.stringify([organization(), pulumi.getProject(), pulumi.getStack(), type, name, parentUrn]))
      .digest("hex")
      .slice(0, 32)}`;
  return opts?.parent ? opts.parent.urn.apply(marker) : marker("");
}
