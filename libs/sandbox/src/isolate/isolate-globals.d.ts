// The globals the isolate scripts (prelude.js, realm.js) find: SES's, and what the host sets before they run.
// Type declarations only, for their own type-check project (tsconfig.json beside this file).
declare function harden<T>(value: T): T;
declare function lockdown(options?: Record<string, unknown>): void;
declare function repairIntrinsics(options?: Record<string, unknown>): void;
declare function hardenIntrinsics(): void;
declare class Compartment {
  constructor(...args: unknown[]);
  readonly globalThis: Record<PropertyKey, unknown>;
  evaluate(source: string, options?: Record<string, unknown>): unknown;
}
