/**
 * Injection tokens of the gateway's ports and settings. A port is an interface (no runtime value), so Nest needs a
 * token to hand out its adapter; swapping an adapter (the benchmark's naive baseline does) means providing another
 * value for the same token.
 */
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
/** Random per process: names this gateway's reply channel and its quota leases. */
export const GATEWAY_ID = Symbol('GATEWAY_ID');
/** The producer ioredis connection (no offline queue): enqueues, job reads, quota leases. */
export const PRODUCER_CONNECTION = Symbol('PRODUCER_CONNECTION');
export const REGISTRY_CLIENT = Symbol('REGISTRY_CLIENT');
export const INVOCATION_QUEUE = Symbol('INVOCATION_QUEUE');
export const REPLY_WAITER = Symbol('REPLY_WAITER');
export const QUOTA_STORE = Symbol('QUOTA_STORE');
/** Idempotency-Key records shared by every gateway (IdempotencyStore). */
export const IDEMPOTENCY_STORE = Symbol('IDEMPOTENCY_STORE');
/** The compiled input validators (InputValidatorCache). */
export const INPUT_VALIDATORS = Symbol('INPUT_VALIDATORS');
export const INVOCATION_SETTINGS = Symbol('INVOCATION_SETTINGS');
