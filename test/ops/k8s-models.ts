/**
 * The kubernetes-models class that validates an object of a given apiVersion and kind: the Kubernetes API's own
 * schemas, KEDA's and prometheus-operator's CRD schemas (kubernetes-models is generated from them).
 */
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { PodMonitor, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

interface Validatable {
  validate(): void;
}

/** Wraps a rendered object, unchecked: `validate()` is the check (it throws on what the schema refuses). */
export type ModelOf = (data: object) => Validatable;

const model =
  // D ties the one cast to the model's own input type.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- see above
  <D>(Model: new (data: D) => Validatable): ModelOf =>
    (data) =>
      new Model(data as D);

const MODELS: Record<string, ModelOf> = {
  'v1/ConfigMap': model(ConfigMap),
  'v1/Namespace': model(Namespace),
  'v1/Secret': model(Secret),
  'v1/Service': model(Service),
  'apps/v1/Deployment': model(Deployment),
  'autoscaling/v2/HorizontalPodAutoscaler': model(HorizontalPodAutoscaler),
  'networking.k8s.io/v1/NetworkPolicy': model(NetworkPolicy),
  'policy/v1/PodDisruptionBudget': model(PodDisruptionBudget),
  'keda.sh/v1alpha1/ScaledObject': model(ScaledObject),
  'monitoring.coreos.com/v1/PodMonitor': model(PodMonitor),
  'monitoring.coreos.com/v1/ServiceMonitor': model(ServiceMonitor),
};

export function k8sModelOf(apiVersion: string, kind: string): ModelOf | undefined {
  return MODELS[`${apiVersion}/${kind}`];
}
