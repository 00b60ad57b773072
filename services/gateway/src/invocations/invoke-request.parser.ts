import Ajv from 'ajv';
import {
  describeInputErrors,
  ErrorCode,
  invokeRequestSchema,
  problemDetails,
  type InvokeRequest,
} from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';

const requestAjv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validateRequest = requestAjv.compile<InvokeRequest>(invokeRequestSchema);

/**
 * The body of an invocation (`invokeRequestSchema`, compiled once) → InvokeRequest, or a 400 naming every problem:
 * BAD_REQUEST when it has an unknown field, VALIDATION_FAILED when its fields are wrong (docs/api.md, "Errors").
 */
export function parseInvokeRequest(body: unknown): InvokeRequest {
  if (validateRequest(body)) return pinned(body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const problems = [{ path: '', message: 'the request body must be a JSON object' }];
    throw GatewayError.badRequest('the request body must be a JSON object', problemDetails(problems));
  }
  const errors = validateRequest.errors ?? [];
  const unknownField = errors.find((e) => e.keyword === 'additionalProperties');
  // The paths name the property for `required` and `additionalProperties`, as for a tool's input.
  const problems = describeInputErrors(errors).map((problem, i) =>
    errors[i]?.keyword === 'additionalProperties' ? { ...problem, message: 'is not a known field' } : problem,
  );
  const summary = unknownField ? 'unknown field in the request body' : 'invalid request body';
  throw new GatewayError(
    unknownField ? ErrorCode.BAD_REQUEST : ErrorCode.VALIDATION_FAILED,
    `${summary}: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
    problemDetails(problems),
  );
}

/** `version` folded into `tool` (`tool@<version>`), the one form the resolver reads; both at once is refused. */
function pinned(request: InvokeRequest): InvokeRequest {
  const { version, ...rest } = request;
  if (version === undefined) return request;
  if (rest.tool.includes('@')) {
    const problems = [{ path: '/version', message: 'pins a version the tool reference already pins (tool@version)' }];
    throw new GatewayError(
      ErrorCode.VALIDATION_FAILED,
      'give the version either in `tool` or in `version`, not both',
      problemDetails(problems),
    );
  }
  return { ...rest, tool: `${rest.tool}@${version}` };
}
