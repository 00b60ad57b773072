export * from './error-codes';
export * from './limits';
export * from './tool.types';
export * from './invocation.types';
export * from './registry.schemas';
export * from './api-key';
export * from './internal-api.types';
export * from './lru-cache';
