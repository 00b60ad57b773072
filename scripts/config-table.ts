/**
 * Prints the configuration table of the README from the services' env schemas, so the docs cannot drift from
 * what the services read: `node dist/scripts/config-table.js`. A test checks the README names every variable.
 */
import type { EnvProperty, EnvSchema } from '@toolhost/config';
import { gatewayEnvSchema } from '../services/gateway/src/gateway.config';
import { registryEnvSchema } from '../services/registry/src/registry.config';
import { workerEnvSchema } from '../services/worker/src/worker.config';

export const SERVICE_SCHEMAS: Record<string, EnvSchema> = {
  gateway: gatewayEnvSchema,
  registry: registryEnvSchema,
  worker: workerEnvSchema,
};

interface Row {
  name: string;
  property: EnvProperty;
  services: string[];
}

export function configRows(): Row[] {
  const rows = new Map<string, Row>();
  for (const [service, schema] of Object.entries(SERVICE_SCHEMAS)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      const row = rows.get(name) ?? { name, property, services: [] };
      row.services.push(service);
      rows.set(name, row);
    }
  }
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function configTable(): string {
  const escape = (text: string): string => text.replace(/\|/g, '\\|');
  const lines = ['| variable | default | read by | meaning |', '|---|---|---|---|'];
  for (const { name, property, services } of configRows()) {
    const fallback = property.default === undefined ? '—' : `\`${String(property.default)}\``;
    const allowed = property.enum ? ` (${property.enum.join(' \\| ')})` : '';
    lines.push(`| \`${name}\` | ${fallback} | ${services.join(', ')} | ${escape(property.description)}${allowed} |`);
  }
  return lines.join('\n');
}

if (require.main === module) console.log(configTable());
