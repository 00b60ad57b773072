/** Queue and channel names in one place: every producer and consumer agrees on them through this file. */
export const INVOCATIONS_QUEUE = 'invocations';

/**
 * Outcomes travel on a Redis stream read by a consumer group, not a BullMQ queue: a batch is one pipelined XADD
 * from the worker and one XREADGROUP + XACK/XDEL in the registry, where a BullMQ job costs three scripts per
 * outcome (docs/pipeline.md has the measurement). Same key prefix as the queues, so a hash-tagged prefix keeps them
 * in one Redis Cluster slot.
 */
export const outcomesStreamKey = (prefix: string): string => `${prefix}:outcomes:stream`;
/** Outcomes the registry could never apply (raw fields, `stream-id`, `error`), for inspection and replay. */
export const outcomesDeadLetterKey = (prefix: string): string => `${prefix}:outcomes:dead`;
export const OUTCOMES_GROUP = 'registry';

/** Default BullMQ key prefix; on Redis Cluster use a hash tag such as `{toolhost}`. */
export const DEFAULT_QUEUE_PREFIX = 'toolhost';

/**
 * Pub/sub channel the registry publishes tool changes on; gateways and workers drop cached entries. Channels are
 * named under the key prefix like the keys, so that deployments sharing one Redis do not hear each other.
 */
export const toolChangedChannel = (prefix: string): string => `${prefix}:tool-changed`;

/**
 * The worker's supervisors publish the tool versions they make crash suspects here, before they answer the callers of
 * the dead executor's runs, so that every executor knows before a caller can try again.
 */
export const crashSuspectsChannel = (prefix: string): string => `${prefix}:crash-suspects`;

/** Each gateway instance listens on its own reply channel, so no gateway reads another's results. */
export const replyChannel = (prefix: string, gatewayId: string): string => `${prefix}:replies:${gatewayId}`;
