// The messages of toolhost/v1/tool_runtime.proto as @grpc/proto-loader hands them over and takes them
// (`PROTO_LOADER_OPTIONS`: camelCase fields, enums as their names, unset fields absent, proto3 `optional` fields
// present only when sent). Written by hand to mirror the proto: a field added there is added here.

/** google.protobuf.Value: exactly one kind is set. */
export type ValueMessage =
  | { nullValue: 'NULL_VALUE' | 0 }
  | { numberValue: number }
  | { stringValue: string }
  | { boolValue: boolean }
  | { structValue: StructMessage }
  | { listValue: { values?: ValueMessage[] } };

/** google.protobuf.Struct. */
export interface StructMessage {
  fields?: Record<string, ValueMessage>;
}

export interface InvocationContextMessage {
  agentId?: string;
  agentName?: string;
  powerUserId?: string;
  toolCallId?: string;
  conversationId?: string;
}

export interface InvokeRequestMessage {
  tool?: string;
  input?: StructMessage;
  context?: InvocationContextMessage;
  wait?: boolean;
  timeoutMs?: number;
  version?: number;
  idempotencyKey?: string;
}

export type InvocationStatusName =
  'INVOCATION_STATUS_QUEUED' | 'INVOCATION_STATUS_RUNNING' | 'INVOCATION_STATUS_SUCCEEDED' | 'INVOCATION_STATUS_FAILED';

export interface InvocationMessage {
  id: string;
  tool?: string;
  toolId?: string;
  version?: number;
  status: InvocationStatusName;
  result?: ValueMessage;
  content?: { type: string; text: string }[];
  error?: { code: string; message: string; details?: ValueMessage };
  durationMs?: number;
  logs?: string[];
}

export interface InvocationEventMessage {
  state: InvocationMessage;
}

export interface GetInvocationRequestMessage {
  id?: string;
}

/** An enum value the client sent that this proto does not name arrives as its number. */
export interface ListToolsRequestMessage {
  format?: string | number;
}

export interface ListToolsResponseMessage {
  items: StructMessage[];
}

export interface HealthCheckRequestMessage {
  service?: string;
}

export type ServingStatusName = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

export interface HealthCheckResponseMessage {
  status: ServingStatusName;
}
