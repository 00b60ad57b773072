import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { PAGE_DEFAULT, PAGE_MAX } from '../database/keyset-page';

/** `?limit=&cursor=` of a paged list of a tool's rows (database/keyset-page.ts), as OpenAPI documents it. */
export const ApiPageQuery = (): MethodDecorator =>
  applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: PAGE_MAX, default: PAGE_DEFAULT },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      schema: { type: 'string' },
      description: '`nextCursor` of the previous page',
    }),
  );
