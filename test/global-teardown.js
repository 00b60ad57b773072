// Stops the containers global-setup started (none when the local Postgres and Redis answered).
module.exports = async () => {
  for (const started of globalThis.__toolhostContainers ?? []) await started.stop();
};
