/** What the HTTP services share of authorisation: the `@Access` rule of a route, read the same way by every guard. */
export * from './access.decorator';
