import type { components } from './generated/openapi';

/** One page of a list: the list envelope with its items (docs/api/conventions.md#lists). */
export type Page<T> = components['schemas']['ListEnvelope'] & { data: T[] };

/**
 * What a `list()` returns: await it for the first page, or iterate it with `for await` for every
 * item of every page, fetched a page at a time. Pages are read by `offset`, newest first; an item
 * that an insert pushes onto the next page is not yielded twice.
 */
export class PageRequest<T extends { id: string }> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first?: Promise<Page<T>>;

  constructor(
    private readonly fetchPage: (offset: number) => Promise<Page<T>>,
    private readonly startOffset = 0,
  ) {}

  then<A = Page<T>, B = never>(onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    this.first ??= this.fetchPage(this.startOffset);
    return this.first.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const yielded = new Set<string>();
    let offset = this.startOffset;
    for (;;) {
      const page = await this.fetchPage(offset);
      for (const item of page.data) {
        if (yielded.has(item.id)) continue;
        yielded.add(item.id);
        yield item;
      }
      if (!page.has_more || page.data.length === 0) return;
      offset += page.data.length;
    }
  }

  /** Every item, all pages read (for a list you know to be short). */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
