// Once per jest run: build dist/ (the sandbox pool forks compiled children and the e2e and HTTP tests start the
// built services), and make sure Postgres and Redis answer. Tests use DATABASE_URL / REDIS_URL (default: the local
// services); only when one does not answer and a Docker engine exists does this start it with testcontainers.
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { connect } = require('node:net');

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/toolhost';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

function answers(url, fallbackPort) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || fallbackPort), timeout: 1_000 });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

function dockerEngine() {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

async function container(image, port, env) {
  const { GenericContainer } = require('testcontainers');
  let builder = new GenericContainer(image).withExposedPorts(port);
  if (env) builder = builder.withEnvironment(env);
  const started = await builder.start();
  globalThis.__toolhostContainers = [...(globalThis.__toolhostContainers ?? []), started];
  return `${started.getHost()}:${started.getMappedPort(port)}`;
}

module.exports = async () => {
  execFileSync(
    'npx',
    ['swc', 'services', 'libs', 'scripts', 'bench', '-d', 'dist', '--copy-files', '--config-file', '.swcrc', '-q'],
    {
      cwd: `${__dirname}/..`,
      stdio: 'inherit',
    },
  );

  const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  if (!(await answers(databaseUrl, 5432))) {
    if (!dockerEngine()) throw new Error(`Postgres does not answer at ${databaseUrl} and there is no Docker engine`);
    const address = await container('postgres:16-alpine', 5432, { POSTGRES_HOST_AUTH_METHOD: 'trust' });
    // Workers are forked after global setup, so they inherit these.
    process.env.DATABASE_URL = `postgres://postgres@${address}/toolhost`;
  }
  const redisUrl = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  if (!(await answers(redisUrl, 6379))) {
    if (!dockerEngine()) throw new Error(`Redis does not answer at ${redisUrl} and there is no Docker engine`);
    process.env.REDIS_URL = `redis://${await container('redis:7-alpine', 6379)}`;
  }
};
