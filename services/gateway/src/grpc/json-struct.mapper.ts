import { MAX_JSON_DEPTH, problemDetails, type JsonObject, type JsonValue } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import type { StructMessage, ValueMessage } from './tool-runtime.messages';

const NULL: ValueMessage = { nullValue: 'NULL_VALUE' };

/**
 * JSON ↔ google.protobuf.Struct / Value, as proto-loader represents them (protobufjs has no wrapper for these
 * well-known types). What arrives is refused the way the HTTP body would be: deeper than MAX_JSON_DEPTH, or a
 * number JSON cannot carry (NaN, ±Infinity), is BAD_REQUEST naming the path.
 */
export class JsonStructMapper {
  /**
   * A JSON value (a result, a tool definition) → Value, as JSON.stringify would write it: an undefined field is
   * left out, and an undefined item or a number JSON cannot carry is null.
   */
  static toValue(value: unknown): ValueMessage {
    if (typeof value === 'string') return { stringValue: value };
    if (typeof value === 'number') return Number.isFinite(value) ? { numberValue: value } : NULL;
    if (typeof value === 'boolean') return { boolValue: value };
    if (Array.isArray(value)) return { listValue: { values: value.map((item) => JsonStructMapper.toValue(item)) } };
    if (typeof value === 'object' && value !== null) return { structValue: JsonStructMapper.toStruct(value) };
    return NULL;
  }

  static toStruct(object: object): StructMessage {
    const fields: Record<string, ValueMessage> = {};
    const entries: [string, unknown][] = Object.entries(object);
    for (const [key, item] of entries) if (item !== undefined) fields[key] = JsonStructMapper.toValue(item);
    return { fields };
  }

  /** `path`: the JSON pointer of `struct` in the request, for the problems named. */
  static fromStruct(struct: StructMessage, path: string, depth = 1): JsonObject {
    if (depth > MAX_JSON_DEPTH) throw tooDeep(path);
    const object: JsonObject = {};
    for (const [key, item] of Object.entries(struct.fields ?? {})) {
      object[key] = JsonStructMapper.fromValue(item, `${path}/${escapePointer(key)}`, depth);
    }
    return object;
  }

  /** `depth`: how many arrays and objects enclose this value. */
  static fromValue(value: ValueMessage, path: string, depth = 0): JsonValue {
    if ('numberValue' in value) {
      if (!Number.isFinite(value.numberValue)) {
        const problem = { path, message: 'is not a finite number (JSON has no NaN or Infinity)' };
        throw GatewayError.badRequest(`${path} is not a finite number`, problemDetails([problem]));
      }
      return value.numberValue;
    }
    if ('stringValue' in value) return value.stringValue;
    if ('boolValue' in value) return value.boolValue;
    if ('structValue' in value) return JsonStructMapper.fromStruct(value.structValue, path, depth + 1);
    if ('listValue' in value) {
      if (depth + 1 > MAX_JSON_DEPTH) throw tooDeep(path);
      return (value.listValue.values ?? []).map((item, i) =>
        JsonStructMapper.fromValue(item, `${path}/${i}`, depth + 1),
      );
    }
    // null_value, or a Value with no kind set (proto3 leaves it empty): JSON null.
    return null;
  }
}

function tooDeep(path: string): GatewayError {
  const problem = { path, message: `is nested deeper than ${MAX_JSON_DEPTH} levels` };
  return GatewayError.badRequest(`input is nested deeper than ${MAX_JSON_DEPTH} levels`, {
    ...problemDetails([problem]),
    limitDepth: MAX_JSON_DEPTH,
  });
}

/** RFC 6901: `~` and `/` in a key. */
function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
