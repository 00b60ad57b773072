import { Injectable, type PipeTransform } from '@nestjs/common';
import { parseInvokeRequest, ParsedInvokeRequest } from './invoke-request.parser';

/** `POST /v1/invocations` body → ParsedInvokeRequest, or 400 BAD_REQUEST naming every problem. */
@Injectable()
export class InvokeRequestPipe implements PipeTransform<unknown, ParsedInvokeRequest> {
  transform(body: unknown): ParsedInvokeRequest {
    return new ParsedInvokeRequest(parseInvokeRequest(body));
  }
}
