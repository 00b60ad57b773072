/** What other processes (the start script, tests, benchmarks) use of the gateway; services never import each other. */
export { createGatewayApp, drainGatewayApp } from './create-gateway-app';
export { gatewayEnvSchema, loadGatewayConfig, type GatewayConfig } from './gateway.config';
