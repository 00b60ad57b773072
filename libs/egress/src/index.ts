export * from './ip-address';
export * from './host-pattern';
export * from './egress-policy';
export * from './egress-settings';
export * from './egress-record';
export { EgressBudget } from './egress-budget';
export {
  EgressClient,
  MAX_REDIRECTS,
  carriesSecret,
  systemResolver,
  type EgressClientOptions,
  type EgressFetchContext,
  type EgressFetchRequest,
  type RedirectMode,
  type Resolver,
} from './egress-client';
export { pinnedConnector } from './pinned-connector';
