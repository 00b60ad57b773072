/**
 * The metric names the dashboard's queries and the alert rules read (deploy/observability), as the services
 * declare them: a histogram's `_bucket`, `_sum` and `_count` series belong to its base name.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const NAME = /\btoolhost_[a-z0-9_]+/g;

function namesIn(text: string): string[] {
  return [...text.matchAll(NAME)].map(([name]) => name.replace(/_(bucket|sum|count)$/, ''));
}

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

interface RuleFile {
  groups: { rules: { alert: string; expr: string }[] }[];
}

export function dashboardQueries(root: string): { title: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(join(root, 'deploy/observability/dashboard.json'), 'utf8')) as Dashboard;
  return dashboard.panels.flatMap((panel) => panel.targets.map(({ expr }) => ({ title: panel.title, expr })));
}

export function alertRules(root: string): { alert: string; expr: string }[] {
  const rules = parse(readFileSync(join(root, 'deploy/observability/alerts.yaml'), 'utf8')) as RuleFile;
  return rules.groups.flatMap((group) => group.rules);
}

/** Every metric name the dashboard and the alerts use, deduplicated. */
export function referencedMetrics(root: string): string[] {
  const exprs = [...dashboardQueries(root), ...alertRules(root)].map(({ expr }) => expr);
  return [...new Set(exprs.flatMap(namesIn))].sort();
}

/** The metric names a Prometheus text exposition declares (`# TYPE` lines). */
export function declaredMetrics(exposition: string): Set<string> {
  return new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map(([, name]) => name ?? ''));
}
