/**
 * Where each agent of a large change stands, from the agent list instead of one read per agent.
 *
 * Before it writes, an Agent's update must know which version its patch lands on (`provider.ts`,
 * `update`). In the usual case the agent's summary in the agent list tells it: when the version
 * this stack last wrote is both the live and the latest version, no draft is open and the patch
 * branches a new draft from that version. A page of the list holds 100 summaries for one request,
 * so a deployment that changes many agents pages through the list instead of reading each agent
 * (a change of every prompt of 500 agents: a few pages a minute instead of 500 reads).
 *
 * The rules, per process and client:
 * - A listing serves for {@link LISTING_FRESH_MS}; an update after that starts a new one.
 * - A listing fetches at most one page per {@link UPDATES_PER_PAGE} updates this process started
 *   in the last minute, and only as far as an agent being updated is not found yet: the first
 *   updates of a deployment, and every update of a small one, read their agent, and a workspace
 *   far larger than the change is not paged through for it.
 * - A summary serves one update: another update of the same agent within the listing reads it.
 * - A page that fails ends the listing: the updates then read their agents, the path on which
 *   every refusal of the service is reported.
 */
import type { AgentSummaryT, VoiceAgentClient } from "../../client";
import type { Page } from "../../client/pagination";

/** How long a listing serves the updates of a deployment (the summaries' age at most). */
export const LISTING_FRESH_MS = 60_000;
/** Listings fetch at most one page per this many updates started in the last minute. */
export const UPDATES_PER_PAGE = 10;
/** Agents per page (the service's largest page). */
const PAGE_SIZE = 100;

/** One pass through the agent list, fetched page by page as updates ask for agents not yet seen. */
class Listing {
  readonly startedAt = performance.now();
  readonly #byId = new Map<string, AgentSummaryT>();
  readonly #pages: AsyncIterator<Page<AgentSummaryT>>;
  #fetched = 0;
  #ended = false;
  #next: Promise<void> | undefined;

  constructor(client: VoiceAgentClient) {
    this.#pages = client.agents.list({ limit: PAGE_SIZE }).pages();
  }

  /** The summary of `agentId` (taken: it serves one update), or undefined if not within `pages` pages. */
  async take(agentId: string, pages: () => number): Promise<AgentSummaryT | undefined> {
    for (;;) {
      const found = this.#byId.get(agentId);
      if (found) {
        this.#byId.delete(agentId);
        return found;
      }
      if (this.#ended || this.#fetched >= pages()) return undefined;
      await this.#fetchNext();
    }
  }

  /** The next page: one fetch at a time, however many updates wait for it. */
  #fetchNext(): Promise<void> {
    this.#next ??= (async () => {
      try {
        const page = await this.#pages.next();
        if (page.done) {
          this.#ended = true;
          return;
        }
        this.#fetched += 1;
        for (const summary of page.value.data) this.#byId.set(summary.id, summary);
      } catch {
        this.#ended = true;
      } finally {
        this.#next = undefined;
      }
    })();
    return this.#next;
  }
}

/** Per client: the current listing, and when this process's recent updates started. */
interface Lister {
  listing?: Listing;
  starts: number[];
}

let listers = new WeakMap<VoiceAgentClient, Lister>();

/** Forgets the listings and updates so far, as a new provider process starts without them. */
export function forgetListings(): void {
  listers = new WeakMap();
}

/**
 * The summary of agent `agentId` for the update that starts now, from this process's listing of
 * the agent list, or undefined: within the first {@link UPDATES_PER_PAGE} updates of a minute, or
 * not found within the pages the minute's updates allow (see the rules above).
 */
export async function listedSummary(
  client: VoiceAgentClient,
  agentId: string,
): Promise<AgentSummaryT | undefined> {
  const lister = listers.get(client) ?? { starts: [] };
  listers.set(client, lister);
  const now = performance.now();
  lister.starts = lister.starts.filter((t) => now - t < LISTING_FRESH_MS);
  lister.starts.push(now);
  const pages = () => Math.floor(lister.starts.length / UPDATES_PER_PAGE);
  if (!lister.listing || now - lister.listing.startedAt >= LISTING_FRESH_MS) {
    if (pages() === 0) return undefined;
    lister.listing = new Listing(client);
  }
  return lister.listing.take(agentId, pages);
}
