/**
 * The gRPC load driver of `bench:e2e`: `Invoke` calls of the Slug Generator through a real @grpc/grpc-js client built
 * from the repository's protos, `clients` calls in flight at a time on one channel (as an orchestrator holds one
 * channel per gateway), each sending its next call when its answer arrives. Rounds yield the HTTP rows' Sample.
 */
import { Metadata, type ServiceError } from '@grpc/grpc-js';
import type { Stack } from '../test/e2e/stack';
import { GrpcTestClient, jsonOf, structOf } from '../test/support/grpc-client';
import { slug, type Sample } from './http-bench';

/** A stack's gRPC door with the slug tool created and checked; returns what one measurement against it runs. */
export async function grpcTarget(
  label: string,
  stack: Stack,
): Promise<{ run: (clients: number, seconds: number) => Promise<Sample>; close: () => void }> {
  const { key } = await stack.tenant(label);
  const tool = await stack.createTool(key, slug);
  // Without channelz, as the gateway runs: per-call statistics nobody reads.
  const client = new GrpcTestClient(stack.gatewayGrpcAddress, { 'grpc.enable_channelz': 0 });
  const check = await client.call(
    'Invoke',
    { tool: tool.toolName, input: structOf({ title: 'My Blog Post Title' }) },
    {
      key,
    },
  );
  if (jsonOf(check.result) !== 'my-blog-post-title') throw new Error(`${label}: wrong answer ${JSON.stringify(check)}`);
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${key}`);
  // Built once, as the HTTP rows send one prepared body.
  const request = { tool: tool.toolName, input: structOf({ title: 'My Blog Post Title' }) };
  const invoke = (): Promise<string> =>
    new Promise((resolve, reject) => {
      client.toolRuntime.Invoke(request, metadata, (error: ServiceError | null, answer: { status: string }) =>
        error ? reject(error) : resolve(answer.status),
      );
    });

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
        try {
          // Latencies of finished calls only, as the HTTP rows count 200s only.
          if ((await invoke()) === 'INVOCATION_STATUS_SUCCEEDED') latencies.push(performance.now() - started);
          else unfinished += 1;
        } catch {
          errors += 1;
        }
      }
    };
    await Promise.all(Array.from({ length: clients }, loop));
    return { requests, seconds, latencies, errors, non2xx: unfinished };
  };
  return { run, close: () => client.close() };
}
