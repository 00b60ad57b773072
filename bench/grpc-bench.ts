/**
 * The gRPC load driver of `bench:e2e`: `Invoke` calls of the Slug Generator on one HTTP/2 connection (as an
 * orchestrator holds one channel per gateway), `clients` calls in flight at a time, each sending its next call when
 * its answer arrives. Rounds yield the HTTP rows' Sample.
 *
 * The calls are plain gRPC over `node:http2`: the request message encoded once from the repository's protos, each
 * answer's status read from its trailers and its message decoded without conversion. That is what autocannon is to
 * the HTTP rows, and what ghz or h2load are to gRPC servers: a @grpc/grpc-js client costs about four times
 * autocannon's CPU per call (its call stack, metadata and object conversion), on the same two vCPUs as the stack, so
 * the row measured the client as much as the door. The check before the rounds is a real @grpc/grpc-js call.
 */
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { PROTO_FILES, resolveProtoPath } from '@toolhost/contracts';
import { Root, type Message, type Type } from 'protobufjs';
import type { Stack } from '../test/e2e/stack';
import { GrpcTestClient, jsonOf, structOf } from '../test/support/grpc-client';
import { slug, type Sample } from './http-bench';

const INVOKE_PATH = '/toolhost.v1.ToolRuntime/Invoke';

const messages = (() => {
  const root = new Root();
  root.resolvePath = resolveProtoPath;
  root.loadSync([PROTO_FILES.toolRuntime]);
  root.resolveAll();
  return {
    request: root.lookupType('toolhost.v1.InvokeRequest'),
    invocation: root.lookupType('toolhost.v1.Invocation'),
    succeeded: root.lookupEnum('toolhost.v1.InvocationStatus').values.INVOCATION_STATUS_SUCCEEDED,
  };
})();

/** A gRPC message as sent on the wire: no compression flag, its length (big-endian), then its bytes. */
function frame(type: Type, value: Record<string, unknown>): Buffer {
  const body = type.encode(type.fromObject(value)).finish();
  const framed = Buffer.alloc(5 + body.length);
  framed.writeUInt32BE(body.length, 1);
  framed.set(body, 5);
  return framed;
}

/** The fields of an `Invoke` answer read here (protobufjs's message object: the status as its number). */
interface InvocationFields {
  status?: number;
}
const statusOf = (invocation: Message): number | undefined => (invocation as InvocationFields).status;

/** One unary call: its Invocation when it ended with gRPC status OK, else undefined. */
function unary(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body: Buffer,
): Promise<Message | undefined> {
  return new Promise((resolve) => {
    const stream = session.request(headers);
    const chunks: Buffer[] = [];
    let status: string | undefined;
    stream.on('response', (answer) => {
      // A call refused before its message answers with trailers only: the status is in the headers.
      status = answer['grpc-status'] as string | undefined;
    });
    stream.on('trailers', (trailers) => {
      status = trailers['grpc-status'] as string | undefined;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => resolve(undefined));
    stream.on('end', () => {
      const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      if (status !== '0' || data === undefined || data.length < 5) {
        resolve(undefined);
        return;
      }
      resolve(messages.invocation.decode(data.subarray(5, 5 + data.readUInt32BE(1))));
    });
    stream.end(body);
  });
}

/** A stack's gRPC door with the slug tool created and checked; returns what one measurement against it runs. */
export async function grpcTarget(
  label: string,
  stack: Stack,
): Promise<{ run: (clients: number, seconds: number) => Promise<Sample>; close: () => void }> {
  const { key } = await stack.tenant(label);
  const tool = await stack.createTool(key, slug);
  const input = { title: 'My Blog Post Title' };
  const checker = new GrpcTestClient(stack.gatewayGrpcAddress);
  try {
    const check = await checker.call('Invoke', { tool: tool.toolName, input: structOf(input) }, { key });
    if (jsonOf(check.result) !== 'my-blog-post-title') {
      throw new Error(`${label}: wrong answer ${JSON.stringify(check)}`);
    }
  } finally {
    checker.close();
  }

  const session = connect(`http://${stack.gatewayGrpcAddress}`);
  session.on('error', () => undefined);
  // Built once, as the HTTP rows send one prepared body.
  const body = frame(messages.request, { tool: tool.toolName, input: structOf(input) });
  const headers = {
    [constants.HTTP2_HEADER_METHOD]: 'POST',
    [constants.HTTP2_HEADER_PATH]: INVOKE_PATH,
    [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
    te: 'trailers',
    authorization: `Bearer ${key}`,
  };
  const sanity = await unary(session, headers, body);
  const answered: unknown = sanity && jsonOf(messages.invocation.toObject(sanity).result);
  if (sanity === undefined || statusOf(sanity) !== messages.succeeded || answered !== 'my-blog-post-title') {
    throw new Error(`${label}: the plain HTTP/2 call answered ${JSON.stringify(sanity)}`);
  }

  const run = async (clients: number, seconds: number): Promise<Sample> => {
    const latencies: number[] = [];
    let requests = 0;
    let errors = 0;
    let unfinished = 0;
    const until = performance.now() + seconds * 1000;
    const loop = async (): Promise<void> => {
      while (performance.now() < until) {
        const started = performance.now();
        requests += 1;
        const invocation = await unary(session, headers, body);
        // Latencies of finished calls only, as the HTTP rows count 200s only.
        if (invocation === undefined) errors += 1;
        else if (statusOf(invocation) === messages.succeeded) latencies.push(performance.now() - started);
        else unfinished += 1;
      }
    };
    await Promise.all(Array.from({ length: clients }, loop));
    return { requests, seconds, latencies, errors, non2xx: unfinished };
  };
  return { run, close: () => session.close() };
}
