/** A built-in refused its input; the caller gets `{error: 'VALIDATION_FAILED'}` like for a custom tool. */
export class BuiltinInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BuiltinInputError';
  }
}
