/** One page of a list call. */
export interface Page<T> {
  readonly items: readonly T[];
  /** Empty on the last page. */
  readonly nextPageToken: string;
}

/** One page of workloads, with the store revision it was read at (to watch from). */
export interface WorkloadPage<T> extends Page<T> {
  /** Pass as `afterStoreRevision` to {@link WorkloadsApi.watch} to see every later change. */
  readonly storeRevision: number;
}

/**
 * A lazily fetched, paginated list: iterate it with `for await` to get every item across pages,
 * or use {@link PagedList.pages} to see the pages. Nothing is fetched before iteration starts; each
 * iteration starts again from the first page. A failing page fetch throws from the loop.
 */
export class PagedList<T, P extends Page<T> = Page<T>> implements AsyncIterable<T> {
  /** @param fetchPage fetches the page after `pageToken` (`""` for the first) */
  constructor(private readonly fetchPage: (pageToken: string) => Promise<P>) {}

  /** Every page in order, fetching the next one only when asked for. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let token = "";
    do {
      const page = await this.fetchPage(token);
      yield page;
      token = page.nextPageToken;
    } while (token);
  }

  /** Every item of every page, in order. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Fetches every page and returns all items. */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
