// Exact type equality, for asserting what the declarations infer.
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
/** Compiles only when `T` is `true`: `expect<Equal<typeof x, number>>()`. */
export function expect<T extends true>(): void {}
