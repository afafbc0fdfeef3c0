/**
 * What the watch keeps of its reads (`unattachedGroups`): a published version's groups once, a
 * draft's never; the groups' names from the process's shared listing, read once a pass (a pass
 * begins with `forgetListedNames`), and a failed read of it not kept, so the next version asks
 * again instead of failing on the same error.
 */
import { describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import { forgetListedNames } from "../../src/resources/agent/names";
import { unattachedGroups } from "../../src/resources/agentVersion/watch";

/** A client answering the two reads, counting them; the library fails while `failLibrary` is set. */
function fakeClient(published: boolean) {
  const counts = { versions: 0, library: 0 };
  let failLibrary = false;
  const client = {
    agents: {
      get: async () => {
        counts.versions++;
        return { is_published: published, analysis_group_ids: ["grp_1"] };
      },
    },
    analysis: {
      list: () =>
        (async function* () {
          counts.library++;
          if (failLibrary) throw new Error("503 from the service");
          yield { id: "grp_1", name: "Default Analysis", enabled: true, items: [] };
        })(),
    },
  } as unknown as VoiceAgentClient;
  return { client, counts, setFailLibrary: (v: boolean) => (failLibrary = v) };
}

describe("unattachedGroups: what the watch keeps of its reads", () => {
  test("a published version is read once; the library once a pass; a failed library read is not kept", async () => {
    const { client, counts, setFailLibrary } = fakeClient(true);
    const attached = new Map<string, readonly string[]>();
    forgetListedNames();
    setFailLibrary(true);
    await expect(unattachedGroups(client, "a1", 1, ["Default Analysis/Sentiment"], attached)).rejects.toThrow(
      "503",
    );
    setFailLibrary(false);
    // The next version of the same pass reads the library again, and finds the group attached.
    expect(await unattachedGroups(client, "a2", 1, ["QA/Resolved"], attached)).toEqual(["QA"]);
    expect(await unattachedGroups(client, "a1", 1, ["Default Analysis/Sentiment"], attached)).toEqual([]);
    expect(counts).toEqual({ versions: 2, library: 2 });
    // A new pass: the library again, the versions not.
    forgetListedNames();
    expect(await unattachedGroups(client, "a1", 1, ["QA/Resolved"], attached)).toEqual(["QA"]);
    expect(await unattachedGroups(client, "a2", 1, ["QA/Resolved"], attached)).toEqual(["QA"]);
    expect(counts).toEqual({ versions: 2, library: 3 });
  });

  test("a draft may still change: read every time", async () => {
    const { client, counts } = fakeClient(false);
    const attached = new Map<string, readonly string[]>();
    await unattachedGroups(client, "a1", 0, ["QA/Resolved"], attached);
    await unattachedGroups(client, "a1", 0, ["QA/Resolved"], attached);
    expect(counts.versions).toBe(2);
    expect(attached.size).toBe(0);
  });

  test("nothing unmeasured: nothing read", async () => {
    const { client, counts } = fakeClient(true);
    expect(await unattachedGroups(client, "a1", 1, [], new Map())).toEqual([]);
    expect(counts).toEqual({ versions: 0, library: 0 });
  });
});
