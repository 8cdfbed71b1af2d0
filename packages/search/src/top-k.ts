/**
 * Keeps the first `limit` items of a stream in a given order without sorting the stream: a page
 * needs only `from + size` items, and sorting 100,000 matches to show ten costs several times the
 * scan itself. A max-heap holds the current best; each offer costs O(log limit).
 */
export class TopK<T> {
  /** Max-heap by `compare`: the worst kept item is at index 0. */
  private readonly heap: T[] = [];

  constructor(
    private readonly limit: number,
    private readonly compare: (a: T, b: T) => number,
  ) {}

  offer(item: T): void {
    if (this.limit <= 0) return;
    const { heap } = this;
    if (heap.length < this.limit) {
      heap.push(item);
      this.siftUp(heap.length - 1);
      return;
    }
    const worst = heap[0];
    if (worst !== undefined && this.compare(item, worst) < 0) {
      heap[0] = item;
      this.siftDown(0);
    }
  }

  /** The kept items, best first. */
  sorted(): T[] {
    return [...this.heap].sort(this.compare);
  }

  private siftUp(start: number): void {
    const { heap } = this;
    let index = start;
    const item = heap[index];
    if (item === undefined) return;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex];
      if (parent === undefined || this.compare(item, parent) <= 0) break;
      heap[index] = parent;
      index = parentIndex;
    }
    heap[index] = item;
  }

  private siftDown(start: number): void {
    const { heap } = this;
    let index = start;
    const item = heap[index];
    if (item === undefined) return;
    for (;;) {
      let largestIndex = index;
      let largest = item;
      const left = heap[2 * index + 1];
      if (left !== undefined && this.compare(left, largest) > 0) {
        largestIndex = 2 * index + 1;
        largest = left;
      }
      const right = heap[2 * index + 2];
      if (right !== undefined && this.compare(right, largest) > 0) {
        largestIndex = 2 * index + 2;
        largest = right;
      }
      if (largestIndex === index) break;
      heap[index] = largest;
      index = largestIndex;
    }
    heap[index] = item;
  }
}
