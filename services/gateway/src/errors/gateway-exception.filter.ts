import { ArgumentsHost, Catch, Logger, type ExceptionFilter } from '@nestjs/common';
import { ErrorCode, frameworkErrorResponse, type ErrorBody } from '@toolhost/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { jsonRpcErrorOfHttp, MCP_PATH } from '../mcp/mcp-errors';
import { GatewayError } from './gateway.error';

export interface ErrorResponse {
  status: number;
  body: ErrorBody | object;
  headers: Record<string, string>;
}

/** The gateway's one exception filter: contract error bodies (`{error: {code, message, details?}}`), never internals. */
@Catch()
export class GatewayExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('GatewayExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body, headers } = this.toResponse(exception);
    // MCP clients read JSON-RPC errors: a body Fastify refused on `/mcp` (malformed, too large) is answered as one.
    const request = host.switchToHttp().getRequest<Partial<FastifyRequest> | undefined>();
    const onMcp = request?.routeOptions?.url === MCP_PATH;
    void reply
      .status(status)
      .headers(headers)
      .send(onMcp ? jsonRpcErrorOfHttp(status, body) : body);
  }

  toResponse(exception: unknown): ErrorResponse {
    if (exception instanceof GatewayError) {
      const error: ErrorBody['error'] = { code: exception.code, message: exception.message };
      if (exception.details !== undefined) error.details = exception.details;
      const headers: Record<string, string> = {};
      if (exception.retryAfterSec !== undefined) headers['retry-after'] = String(exception.retryAfterSec);
      if (exception.status >= 500 && exception.code === ErrorCode.INTERNAL) this.logger.error(exception.message);
      return { status: exception.status, body: { error }, headers };
    }
    const framework = frameworkErrorResponse(exception);
    if (framework) return { ...framework, headers: {} };
    this.logger.error(exception instanceof Error ? exception : { exception }, 'unhandled error');
    return { status: 500, body: { error: { code: ErrorCode.INTERNAL, message: 'internal error' } }, headers: {} };
  }
}
