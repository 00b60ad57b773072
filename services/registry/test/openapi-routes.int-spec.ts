/**
 * The registry's OpenAPI document is generated from its controllers: every route its router serves is in
 * `/openapi.json`, and the document lists no route the router does not serve.
 */
import { walkRoutes } from '../../../test/support/openapi-routes';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database';

describe('registry OpenAPI document', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  it('describes exactly the routes the router serves', async () => {
    const walked = await walkRoutes('registry', { DATABASE_URL: database.url });
    expect(walked.undocumented).toEqual([]);
    expect(walked.unserved).toEqual([]);
    expect(walked.code).toBe(0);
    // The walk saw the routes at all (an empty router and an empty document would agree too).
    expect(walked.routes).toEqual(
      expect.arrayContaining([
        'POST /v1/tools',
        'GET /v1/tools/{id}/audit',
        'POST /v1/tools/import',
        'GET /v1/tools/export',
        'GET /health/ready',
        'GET /metrics',
      ]),
    );
  });
});
