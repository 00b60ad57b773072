export * from './names';
export * from './payloads';
export * from './job-options';
export * from './redis-connection';
export * from './micro-batcher';
export * from './outcome-codec';
