/**
 * A real @grpc/grpc-js client of the gateway, built from the repository's protos (as any client would be), for the
 * gRPC tests and the benchmark: ToolRuntime and Health calls as promises, and the rich error model's trailer decoded.
 */
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  status,
  type ChannelOptions,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_DIR, PROTO_FILES, resolveProtoPath } from '@toolhost/contracts';
import { Root } from 'protobufjs';

// Answers are read field by field in assertions; a loose type keeps the tests short.
type Json = any;

/** The options the gateway loads the protos with: camelCase fields, enums by name, unset fields absent. */
const LOADER_OPTIONS = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

const definition = loadSync([PROTO_FILES.toolRuntime, PROTO_FILES.health], LOADER_OPTIONS);
const packages: Json = loadPackageDefinition(definition);

export interface CallOptions {
  /** Sent as `authorization: Bearer <key>`. */
  key?: string;
  /** The call's deadline, from now. */
  deadlineMs?: number;
}

export interface StreamAnswer {
  messages: Json[];
  /** Set when the stream ended with a status other than OK. */
  error?: ServiceError;
}

export class GrpcTestClient {
  /** The generated ToolRuntime client (its methods are built from the proto at run time, hence untyped). */
  readonly toolRuntime: Json;
  private readonly health: Json;

  constructor(
    readonly address: string,
    options: ChannelOptions = {},
  ) {
    this.toolRuntime = new packages.toolhost.v1.ToolRuntime(address, credentials.createInsecure(), options);
    this.health = new packages.grpc.health.v1.Health(address, credentials.createInsecure(), options);
  }

  /** A unary ToolRuntime call; rejects with the ServiceError of a status other than OK. */
  call(method: 'Invoke' | 'GetInvocation' | 'ListTools', request: object, options: CallOptions = {}): Promise<Json> {
    return unary(this.toolRuntime, method, request, options);
  }

  /** InvokeStream to its end: every message, and the error status if it did not end OK. */
  stream(request: object, options: CallOptions = {}): Promise<StreamAnswer> {
    const call = this.toolRuntime.InvokeStream(request, metadataOf(options), callOptionsOf(options));
    const messages: Json[] = [];
    return new Promise((resolve) => {
      call.on('data', (message: Json) => messages.push(message));
      call.on('error', (error: ServiceError) => resolve({ messages, error }));
      call.on('end', () => resolve({ messages }));
    });
  }

  healthCheck(service: string, options: CallOptions = {}): Promise<Json> {
    return unary(this.health, 'Check', { service }, options);
  }

  /** The first status a Watch stream sends; the stream is cancelled after it. */
  healthWatchFirst(service: string): Promise<Json> {
    const call = this.health.Watch({ service });
    return new Promise((resolve, reject) => {
      call.on('data', (message: Json) => {
        resolve(message);
        call.cancel();
      });
      call.on('error', (error: ServiceError) => {
        if (error.code !== status.CANCELLED) reject(error);
      });
    });
  }

  close(): void {
    this.toolRuntime.close();
    this.health.close();
  }
}

function metadataOf(options: CallOptions): Metadata {
  const metadata = new Metadata();
  if (options.key !== undefined) metadata.set('authorization', `Bearer ${options.key}`);
  return metadata;
}

function callOptionsOf(options: CallOptions): { deadline?: Date } {
  return options.deadlineMs === undefined ? {} : { deadline: new Date(Date.now() + options.deadlineMs) };
}

function unary(client: Json, method: string, request: object, options: CallOptions): Promise<Json> {
  return new Promise((resolve, reject) => {
    client[method](request, metadataOf(options), callOptionsOf(options), (error: ServiceError | null, answer: Json) =>
      error ? reject(error) : resolve(answer),
    );
  });
}

/** The ServiceError a call failed with; throws when it succeeded. */
export async function failureOf(answer: Promise<unknown>): Promise<ServiceError> {
  try {
    const value = await answer;
    throw new Error(`expected the call to fail; it answered ${JSON.stringify(value)}`);
  } catch (error) {
    if (error instanceof Error && 'code' in error && 'metadata' in error) return error as ServiceError;
    throw error;
  }
}

const errorTypes = (() => {
  const root = new Root();
  root.resolvePath = resolveProtoPath;
  root.loadSync([PROTO_FILES.status, PROTO_FILES.errorDetails]);
  root.resolveAll();
  return root;
})();

export interface RichStatus {
  code: number;
  message: string;
  /** google.rpc.ErrorInfo. */
  errorInfo?: { reason: string; domain: string; metadata: Record<string, string> };
  /** google.rpc.RetryInfo's delay, in ms. */
  retryDelayMs?: number;
  /** google.rpc.BadRequest's field violations. */
  fieldViolations?: { field: string; description: string }[];
  /** The type URLs of every detail, in order. */
  detailTypes: string[];
}

/** Decodes the `grpc-status-details-bin` trailer (google.rpc.Status) of a failed call. */
export function richStatusOf(error: ServiceError): RichStatus {
  const [bytes] = error.metadata.get('grpc-status-details-bin');
  if (!(bytes instanceof Buffer)) throw new Error(`no grpc-status-details-bin trailer on ${error.message}`);
  const StatusType = errorTypes.lookupType('google.rpc.Status');
  const status: Json = StatusType.toObject(StatusType.decode(bytes), { defaults: true });
  const rich: RichStatus = { code: status.code, message: status.message, detailTypes: [] };
  for (const detail of status.details as { type_url: string; value: Uint8Array }[]) {
    rich.detailTypes.push(detail.type_url);
    const type = errorTypes.lookupType(detail.type_url.replace(/^.*\//, ''));
    const value: Json = type.toObject(type.decode(detail.value), { defaults: true, longs: Number });
    if (type.name === 'ErrorInfo') rich.errorInfo = value;
    if (type.name === 'RetryInfo') rich.retryDelayMs = value.retryDelay.seconds * 1000 + value.retryDelay.nanos / 1e6;
    if (type.name === 'BadRequest') rich.fieldViolations = value.fieldViolations;
  }
  return rich;
}

/** google.protobuf.Value (as proto-loader hands it over) → JSON. */
export function jsonOf(value: Json): Json {
  if (value === undefined) return undefined;
  if ('structValue' in value) return structJson(value.structValue);
  if ('listValue' in value) return (value.listValue.values ?? []).map(jsonOf);
  if ('stringValue' in value) return value.stringValue;
  if ('numberValue' in value) return value.numberValue;
  if ('boolValue' in value) return value.boolValue;
  return null;
}

/** google.protobuf.Struct → a JSON object. */
export function structJson(struct: Json): Json {
  return Object.fromEntries(Object.entries(struct.fields ?? {}).map(([key, value]) => [key, jsonOf(value)]));
}

/** A JSON object → google.protobuf.Struct, for requests. */
export function structOf(object: Record<string, unknown>): Json {
  return { fields: Object.fromEntries(Object.entries(object).map(([key, value]) => [key, valueOf(value)])) };
}

function valueOf(value: unknown): Json {
  if (value === null) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(valueOf) } };
  return { structValue: structOf(value as Record<string, unknown>) };
}
