import type { components } from './generated/openapi';

/** One page of a list: the list envelope with its items (docs/api/conventions.md#lists). */
export type Page<T> = components['schemas']['ListEnvelope'] & { data: T[] };

/** Where the next page starts: after the last item read, or before the first (walking backwards). */
export type PageCursor = { starting_after: string } | { ending_before: string };

/**
 * What a `list()` returns: await it for the first page, or iterate it with `for await` for every
 * item of every page, fetched a page at a time. Pages after the first are read by cursor
 * (docs/api/conventions.md#pagination): `starting_after` the last item of the page before, so
 * an object created meanwhile is never yielded twice and none is skipped, and there is no
 * 10 000-item bound. Listing with `ending_before` walks backwards instead, towards the newest,
 * yielding each page's items in that direction (oldest of the page first), as Stripe's clients do.
 */
export class PageRequest<T extends { id: string }> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first?: Promise<Page<T>>;

  constructor(
    private readonly fetchPage: (cursor?: PageCursor) => Promise<Page<T>>,
    private readonly backwards = false,
  ) {}

  then<A = Page<T>, B = never>(onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    this.first ??= this.fetchPage();
    return this.first.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.fetchPage();
    for (;;) {
      yield* this.backwards ? [...page.data].reverse() : page.data;
      if (!page.has_more || page.data.length === 0) return;
      page = await this.fetchPage(this.backwards ? { ending_before: page.data[0]!.id } : { starting_after: page.data[page.data.length - 1]!.id });
    }
  }

  /** Every item, all pages read (for a list you know to be short). */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
