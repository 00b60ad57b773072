import {
  Metadata,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import {
  DEFAULT_TOOL_LIST_FORMAT,
  ErrorCode,
  TOOL_LIST_FORMATS,
  type InvocationAccepted,
  type Invocation,
  type InvokeRequest,
  type ToolListFormat,
} from '@toolhost/contracts';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import type { Principal } from '../auth/principal';
import { GatewayError } from '../errors/gateway.error';
import type { InvocationService } from '../invocations/invocation.service';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { ToolListingService } from '../tools/tool-listing.service';
import { waitForCall } from './call-deadline';
import type { GrpcCallRunner } from './grpc-call-runner';
import { InvocationMessageMapper } from './invocation-message.mapper';
import { JsonStructMapper } from './json-struct.mapper';
import type {
  GetInvocationRequestMessage,
  InvocationEventMessage,
  InvocationMessage,
  InvokeRequestMessage,
  ListToolsRequestMessage,
  ListToolsResponseMessage,
} from './tool-runtime.messages';

/** ToolFormat's value names, by listing format: a format added to the contract does not compile until named. */
const FORMAT_NAMES: Readonly<Record<ToolListFormat, string>> = {
  openai: 'TOOL_FORMAT_OPENAI',
  anthropic: 'TOOL_FORMAT_ANTHROPIC',
  mcp: 'TOOL_FORMAT_MCP',
  pi: 'TOOL_FORMAT_PI',
};

export interface ToolRuntimeSettings {
  /** INVOKE_WAIT_DEFAULT_MS: the wait a call's deadline is compared with when the request names none. */
  waitDefaultMs: number;
}

/**
 * `toolhost.v1.ToolRuntime`, the gRPC door beside the HTTP controllers: the caller's key from the `authorization`
 * metadata through the same authenticator, then the same InvocationService and ToolListingService calls. Scopes,
 * validation, quotas and the answers stay in those services; here messages are only translated.
 */
export class ToolRuntimeHandlers {
  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly invocations: InvocationService,
    private readonly listing: ToolListingService,
    private readonly calls: GrpcCallRunner,
    private readonly metrics: GatewayMetrics,
    private readonly settings: ToolRuntimeSettings,
  ) {}

  implementation(): UntypedServiceImplementation {
    return {
      Invoke: this.calls.unary('Invoke', (call) => this.invoke(call)),
      InvokeStream: this.calls.serverStream('InvokeStream', (call) => this.invokeStream(call)),
      GetInvocation: this.calls.unary('GetInvocation', (call) => this.getInvocation(call)),
      ListTools: this.calls.unary('ListTools', (call) => this.listTools(call)),
    };
  }

  private async invoke(call: ServerUnaryCall<InvokeRequestMessage, InvocationMessage>): Promise<InvocationMessage> {
    const principal = await this.principalOf(call.metadata);
    const outcome = await this.invocations.invoke(principal, this.invokeBody(call), idempotencyOf(call.request));
    if (outcome.replayed) call.sendMetadata(REPLAYED);
    return InvocationMessageMapper.toMessage(outcome.body);
  }

  /** The queued state as soon as the job is enqueued, then the finished invocation (unless the wait ran out). */
  private async invokeStream(call: ServerWritableStream<InvokeRequestMessage, InvocationEventMessage>): Promise<void> {
    const principal = await this.principalOf(call.metadata);
    const body = this.invokeBody(call);
    const send = (invocation: Invocation | InvocationAccepted): void => {
      if (!call.cancelled) call.write({ state: InvocationMessageMapper.toMessage(invocation) });
    };
    // Written from the callback, so an object: a `let` would look constant to the type checker after the call.
    const stream = { queuedSent: false };
    const outcome = await this.invocations.invoke(principal, body, {
      ...idempotencyOf(call.request),
      onQueued: (accepted) => {
        stream.queuedSent = true;
        send(accepted);
      },
    });
    // A finished invocation ends the stream; a queued one was sent already, unless the service answered without
    // enqueueing anew (a retry of an invocation that exists).
    if (outcome.status === 200 || !stream.queuedSent) send(outcome.body);
  }

  private async getInvocation(
    call: ServerUnaryCall<GetInvocationRequestMessage, InvocationMessage>,
  ): Promise<InvocationMessage> {
    const principal = await this.principalOf(call.metadata);
    return InvocationMessageMapper.toMessage(await this.invocations.get(principal, call.request.id ?? ''));
  }

  private async listTools(
    call: ServerUnaryCall<ListToolsRequestMessage, ListToolsResponseMessage>,
  ): Promise<ListToolsResponseMessage> {
    const principal = await this.principalOf(call.metadata);
    const { items } = await this.listing.list(principal, formatOf(call.request.format));
    return { items: items.map((item) => JsonStructMapper.toStruct(item)) };
  }

  /** As the HTTP guard: a missing or malformed key is refused without asking the registry. */
  private principalOf(metadata: Metadata): Promise<Principal> {
    const [authorization] = metadata.get('authorization');
    return this.authenticator.authenticate(typeof authorization === 'string' ? authorization : undefined);
  }

  /**
   * The request as the HTTP body, the call's deadline bounding the wait. A request refused here (an input Struct
   * JSON cannot carry) counts as a rejected invocation, as the HTTP body pipe's refusals do.
   */
  private invokeBody(call: {
    request: InvokeRequestMessage;
    getDeadline: ServerUnaryCall<unknown, unknown>['getDeadline'];
  }): InvokeRequest {
    try {
      const timeoutMs = waitForCall(call.request.timeoutMs, this.settings.waitDefaultMs, call.getDeadline());
      return InvocationMessageMapper.toInvokeBody(call.request, timeoutMs);
    } catch (error) {
      this.metrics.invocation('rejected', error instanceof GatewayError ? error.code : ErrorCode.INTERNAL);
      throw error;
    }
  }
}

/** HTTP's `Idempotent-Replayed: true`, as response metadata. */
const REPLAYED = new Metadata();
REPLAYED.set('idempotent-replayed', 'true');

/** proto3 has no absent string: an empty `idempotency_key` is none. */
function idempotencyOf(request: InvokeRequestMessage): { idempotencyKey?: string } {
  return request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {};
}

/** Unset is the default format; a value this proto does not name (a newer client's) is BAD_REQUEST. */
function formatOf(value: ListToolsRequestMessage['format']): ToolListFormat {
  if (value === undefined || value === 'TOOL_FORMAT_UNSPECIFIED') return DEFAULT_TOOL_LIST_FORMAT;
  const format = TOOL_LIST_FORMATS.find((known) => FORMAT_NAMES[known] === value);
  if (!format) {
    throw GatewayError.badRequest(
      `format must be one of ${TOOL_LIST_FORMATS.map((known) => FORMAT_NAMES[known]).join(', ')}`,
    );
  }
  return format;
}
