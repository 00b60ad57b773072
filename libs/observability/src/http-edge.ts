/**
 * The HTTP edge both HTTP services share: the Fastify adapter they are built on, so that the answers Fastify gives
 * on its own (before any route, guard or filter runs) are the contract's, and a refused body can be read.
 */
import type { IncomingMessage } from 'node:http';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ErrorCode, type ErrorBody } from '@toolhost/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestIdOf } from './access-log';

/**
 * After a body was refused (413, or a body that broke off), how much more of it is read and dropped so that the
 * client, which is usually still writing, gets to read the answer; past this the connection is cut.
 */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
/** The same bound in time. */
const DRAIN_MAX_MS = 10_000;

export interface HttpEdgeOptions {
  /** Largest request body in bytes; larger ones answer 413 BAD_REQUEST. */
  bodyLimit: number;
}

/** Fastify's router errors (an undecodable path, an over-long parameter) as the contract's envelope. */
function routerErrorBody(error: FastifyError): { status: number; body: ErrorBody } {
  const status =
    error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'the request path is not valid percent-encoded UTF-8'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'a path parameter is too long'
        : 'the request path cannot be routed';
  return { status, body: { error: { code: ErrorCode.BAD_REQUEST, message } } };
}

/**
 * Fastify answers a refused body with `Connection: close` and closes the socket as soon as the answer is written.
 * The client is usually still sending the body; the data arriving at a closed socket makes the kernel answer with a
 * reset, and a reset discards what the client had received but not yet read: the 413 itself. So the connection is
 * kept and the rest of the body read and dropped (Node does that for an unread request), within a bound.
 */
function drainRefusedBody(request: IncomingMessage): void {
  let drained = 0;
  const cut = (): void => {
    request.socket.destroy();
  };
  const timer = setTimeout(cut, DRAIN_MAX_MS);
  timer.unref();
  request.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) cut();
  });
  request.once('close', () => clearTimeout(timer));
}

function installBodyDrain(fastify: FastifyInstance): void {
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const declared = Number(request.headers['content-length']);
    const drainable = !(declared > DRAIN_MAX_BYTES);
    if (reply.getHeader('connection') === 'close' && !request.raw.complete && drainable) {
      reply.removeHeader('connection');
      drainRefusedBody(request.raw);
    }
    done(null, payload);
  });
}

/**
 * The Fastify adapter of an HTTP service: its body limit, router errors answered with the contract's 400
 * envelope (not Fastify's own body), and a 413 the client can read before the connection ends.
 */
export function createHttpEdgeAdapter(options: HttpEdgeOptions): FastifyAdapter {
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimit,
    // The caller's x-request-id, or a new one (access-log.ts); Fastify's default is a per-process counter.
    genReqId: requestIdOf,
    // No service mounts Express-style middleware (createLoggerModule mounts none): without middie, a request does
    // not pass through its engine on the way to the route.
    skipMiddie: true,
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const { status, body } = routerErrorBody(error);
      void reply.code(status).send(body);
    },
  });
  installBodyDrain(adapter.getInstance());
  return adapter;
}
