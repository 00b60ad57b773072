import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { TOOL_RUNTIME_SERVICE } from '@toolhost/contracts';
import { MAX_REQUEST_BYTES } from '../common/request-limits';
import type { GrpcHealthService } from './grpc-health.service';

/** The health service's name in the protos. */
export const HEALTH_SERVICE = 'grpc.health.v1.Health';
/** On shutdown, how long calls still running may take before they are cancelled. */
const STOP_GRACE_MS = 2_000;

function serviceOf(definition: PackageDefinition, name: string): ServiceDefinition {
  const found = definition[name];
  if (!found || 'format' in found) throw new Error(`${name} is not a service of the loaded protos`);
  return found;
}

/**
 * The gateway's gRPC server (@grpc/grpc-js): ToolRuntime, health and reflection on GRPC_PORT. It accepts calls from
 * `listen` on; its stop comes after the gateway's drain (GatewayLifecycle, in the root module, runs its shutdown
 * hook first): the calls still waiting have been answered with their queued invocation by then, so `tryShutdown`
 * only lets the last answers out, and whatever is still open after STOP_GRACE_MS is cancelled.
 */
export class GatewayGrpcServer {
  private readonly server: Server;

  constructor(
    definition: PackageDefinition,
    toolRuntime: UntypedServiceImplementation,
    private readonly health: GrpcHealthService,
  ) {
    this.server = new Server({
      // A message over the HTTP body cap is refused by grpc-js before it is parsed: RESOURCE_EXHAUSTED.
      'grpc.max_receive_message_length': MAX_REQUEST_BYTES,
      // Channelz keeps per-call statistics for a channelz service this server does not serve: cost, no use.
      'grpc.enable_channelz': 0,
    });
    this.server.addService(serviceOf(definition, TOOL_RUNTIME_SERVICE), toolRuntime);
    this.server.addService(serviceOf(definition, HEALTH_SERVICE), health.implementation);
    new ReflectionService(definition).addToServer(this.server);
  }

  /** Binds `host:port` (0: a free port) without TLS, and resolves with the port bound. */
  listen(host: string, port: number): Promise<number> {
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.health.close();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, STOP_GRACE_MS);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
