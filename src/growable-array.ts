/**
 * Typed arrays that grow by doubling as values are appended: a column of numbers without one JS
 * value per element (issue 28). `data` holds the values in its first `length` places.
 */
abstract class Growable<T extends Int32Array | Float64Array> {
  data: T;
  length = 0;
  constructor(capacity: number) {
    this.data = this.alloc(capacity);
  }
  protected abstract alloc(n: number): T;
  push(x: number): void {
    if (this.length === this.data.length) {
      const next = this.alloc(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = x;
  }
  at(i: number): number {
    return this.data[i]!;
  }
  get last(): number {
    return this.data[this.length - 1]!;
  }
  /** A copy of the values, exactly `length` long. */
  toArray(): T {
    return this.data.slice(0, this.length) as T;
  }
}

/** A growable Int32Array. */
export class GrowableInt32 extends Growable<Int32Array> {
  constructor(capacity = 1024) {
    super(capacity);
  }
  protected alloc(n: number): Int32Array {
    return new Int32Array(n);
  }
}

/** A growable Float64Array. */
export class GrowableFloat64 extends Growable<Float64Array> {
  constructor(capacity = 1024) {
    super(capacity);
  }
  protected alloc(n: number): Float64Array {
    return new Float64Array(n);
  }
}
