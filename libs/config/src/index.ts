export * from './load-config';
export * from './config.error';
export * from './node-flags';
