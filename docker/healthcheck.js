// The image's HEALTHCHECK: healthy when the service in this container answers /health/ready. One image serves the
// three services, so the ports of all three are asked; only one of them listens here.
const ports = [process.env.GATEWAY_PORT || 3000, process.env.REGISTRY_PORT || 3001, process.env.WORKER_PORT || 3002];
Promise.any(
  ports.map((port) =>
    fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2500) }).then((response) => {
      if (!response.ok) throw new Error(String(response.status));
    }),
  ),
).then(
  () => process.exit(0),
  () => process.exit(1),
);
