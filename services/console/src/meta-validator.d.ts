// The build-time compiled JSON Schema 2020-12 meta-schema validator (vite.config.mts, metaSchemaValidator).
declare module 'virtual:json-schema-meta-validator' {
  const validate: ((data: unknown) => boolean) & {
    errors?: { instancePath: string; message?: string }[] | null;
  };
  export default validate;
}
