/** A cursor envelope as every paged list of the service returns it. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  /** Opaque; pass back as `cursor`. Null when `has_more` is false. */
  next_cursor: string | null;
}

/**
 * Every item of a paged list, fetched lazily page by page. Iterate with `for await`, or call
 * {@link PageIterator.toArray}. Iterating twice fetches twice.
 */
export class PageIterator<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  /** The pages themselves, in order. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor: string | undefined;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.has_more || !page.next_cursor) return;
      // A server that hands out the same cursor twice would loop forever.
      if (seen.has(page.next_cursor)) throw new Error(`pagination cursor repeated: ${page.next_cursor}`);
      seen.add(page.next_cursor);
      cursor = page.next_cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Collect every item. */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }

  /** First item matching `predicate`, stopping as soon as it is found. */
  async find(predicate: (item: T) => boolean): Promise<T | undefined> {
    for await (const item of this) if (predicate(item)) return item;
    return undefined;
  }
}
