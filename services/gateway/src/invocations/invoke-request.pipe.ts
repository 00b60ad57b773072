import { Inject, Injectable, type PipeTransform } from '@nestjs/common';
import { ErrorCode } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { parseInvokeRequest, ParsedInvokeRequest } from './invoke-request.parser';

/**
 * `POST /v1/invocations` body → ParsedInvokeRequest, or 400 BAD_REQUEST naming every problem (counted as a
 * rejected invocation, as the service counts the refusals after it).
 */
@Injectable()
export class InvokeRequestPipe implements PipeTransform<unknown, ParsedInvokeRequest> {
  constructor(@Inject(GatewayMetrics) private readonly metrics: GatewayMetrics) {}

  transform(body: unknown): ParsedInvokeRequest {
    try {
      return new ParsedInvokeRequest(parseInvokeRequest(body));
    } catch (error) {
      this.metrics.invocation('rejected', error instanceof GatewayError ? error.code : ErrorCode.INTERNAL);
      throw error;
    }
  }
}
