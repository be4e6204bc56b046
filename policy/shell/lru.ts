/** A small bounded least-recently-used map. */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  /** A cache holding at most `capacity` entries (at least 1). */
  constructor(private readonly capacity: number) {}

  /** The cached value (and marks it recently used), or undefined. */
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  /** Stores a value, evicting the least recently used entry beyond capacity. */
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > Math.max(1, this.capacity)) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.map.delete(oldest.value);
    }
  }

  /** Number of entries. */
  get size(): number {
    return this.map.size;
  }
}
