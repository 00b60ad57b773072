export * from './error-codes';
export * from './limits';
export * from './tool.types';
export * from './invocation.types';
