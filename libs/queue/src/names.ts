/** Queue and channel names in one place: every producer and consumer agrees on them through this file. */
export const INVOCATIONS_QUEUE = 'invocations';
export const OUTCOMES_QUEUE = 'outcomes';

/** Default BullMQ key prefix; on Redis Cluster use a hash tag such as `{toolhost}`. */
export const DEFAULT_QUEUE_PREFIX = 'toolhost';

/** Pub/sub channel the registry publishes tool changes on; gateways and workers drop cached entries. */
export const TOOL_CHANGED_CHANNEL = 'toolhost:tool-changed';

/** Each gateway instance listens on its own reply channel, so no gateway reads another's results. */
export const replyChannel = (gatewayId: string): string => `toolhost:replies:${gatewayId}`;
