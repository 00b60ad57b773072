const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that are not uuids cannot exist; answering before the query keeps Postgres cast errors out. */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}
