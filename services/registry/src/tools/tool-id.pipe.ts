import { Injectable, type PipeTransform } from '@nestjs/common';
import { parseToolRef } from '@toolhost/contracts';

/**
 * Tool routes take the id or the tool's name, `custom_<id>` (what agents and listings show). Anything else passes
 * through unchanged and answers 404 like any unknown id.
 */
@Injectable()
export class ToolIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const ref = parseToolRef(value);
    return ref && ref.version === undefined ? ref.id : value;
  }
}
