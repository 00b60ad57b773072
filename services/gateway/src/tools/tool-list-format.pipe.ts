import { Injectable, type PipeTransform } from '@nestjs/common';
import { DEFAULT_TOOL_LIST_FORMAT, TOOL_LIST_FORMATS, type ToolListFormat } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';

/** `?format=` → one of the listing formats (absent or empty: the default); anything else is 400 BAD_REQUEST. */
@Injectable()
export class ToolListFormatPipe implements PipeTransform<unknown, ToolListFormat> {
  transform(value: unknown): ToolListFormat {
    if (value === undefined || value === '') return DEFAULT_TOOL_LIST_FORMAT;
    const format = TOOL_LIST_FORMATS.find((known) => known === value);
    if (!format) throw GatewayError.badRequest(`format must be one of ${TOOL_LIST_FORMATS.join(', ')}`);
    return format;
  }
}
