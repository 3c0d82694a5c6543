// What `--pod` names (resolve, resolv-conf): NAMESPACE/NAME or NAME as before, and kubectl's
// TYPE/NAME forms. `pod/NAME` is a pod in --namespace; a workload (`deploy/web`) is not a pod, so
// the error names the pods it has, which are what the commands run in.
import type { ClusterModel, Pod, WorkloadInfo } from '../cluster/model/model.js';

/** kubectl's names of the pod resource: singular, plural, short name. */
const POD_NAMES = new Set(['pod', 'pods', 'po']);

/** kubectl's names of the workload resources (`kubectl api-resources`), with and without group. */
const WORKLOAD_NAMES: ReadonlyMap<string, WorkloadInfo['kind']> = new Map(
  (
    [
      ['Deployment', ['deployment', 'deployments', 'deploy', 'deployment.apps', 'deployments.apps']],
      ['ReplicaSet', ['replicaset', 'replicasets', 'rs', 'replicaset.apps', 'replicasets.apps']],
      ['StatefulSet', ['statefulset', 'statefulsets', 'sts', 'statefulset.apps', 'statefulsets.apps']],
      ['DaemonSet', ['daemonset', 'daemonsets', 'ds', 'daemonset.apps', 'daemonsets.apps']],
      ['Job', ['job', 'jobs', 'job.batch', 'jobs.batch']],
      ['CronJob', ['cronjob', 'cronjobs', 'cj', 'cronjob.batch', 'cronjobs.batch']],
    ] as const
  ).flatMap(([kind, names]) => names.map((n) => [n, kind] as const)),
);

/** The pods a workload has, written in the manifests or derived from it, in name order. */
export function workloadPods(model: ClusterModel, w: WorkloadInfo): Pod[] {
  const owns = (p: Pod): boolean => {
    if (p.namespace !== w.namespace || !p.owner) return false;
    if (p.owner.kind === w.kind && p.owner.name === w.name) return true;
    // A Deployment's pods belong to its ReplicaSet, a CronJob's to the Jobs it made (NAME-<n>).
    if (w.kind === 'Deployment') return p.owner.kind === 'ReplicaSet' && (p.owner.name === w.replicaSet || p.owner.name.startsWith(`${w.name}-`));
    if (w.kind === 'CronJob') return p.owner.kind === 'Job' && p.owner.name.startsWith(`${w.name}-`);
    return false;
  };
  return model.pods.filter(owns).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const list = (names: readonly string[], max = 5): string => `${names.slice(0, max).join(', ')}${names.length > max ? `, ... (${names.length} in all)` : ''}`;

/** The error for a workload given where a pod is wanted: its pods, or how to name one. */
function workloadError(model: ClusterModel | undefined, spec: string, kind: WorkloadInfo['kind'], name: string, namespace: string): Error {
  const head = `--pod ${spec} names a ${kind}, not a pod`;
  const how = 'pass a pod as NAMESPACE/NAME, NAME (in --namespace) or pod/NAME';
  if (!model) return new Error(`${head}; ${how}`);
  const all = (model.workloads ?? []).filter((w) => w.kind === kind && w.name === name);
  const here = all.find((w) => w.namespace === namespace);
  if (here) {
    const pods = workloadPods(model, here).map((p) => `${p.namespace}/${p.name}`);
    if (pods.length === 0) return new Error(`${head}, and ${kind} "${namespace}/${name}" has no pods; ${how}`);
    return new Error(`${head}; its pods are ${list(pods)}: pass one of them, e.g. --pod ${pods[0]}`);
  }
  if (all.length > 0) {
    const where = all.map((w) => w.namespace);
    const pods = all.flatMap((w) => workloadPods(model, w)).map((p) => `${p.namespace}/${p.name}`);
    const some = pods.length > 0 ? `; its pods there are ${list(pods)}: pass one of them, e.g. --pod ${pods[0]}` : `, which has no pods; ${how}`;
    return new Error(`${head}, and namespace "${namespace}" has no ${kind} "${name}" (namespace ${list(where)} has)${some}`);
  }
  return new Error(`${head}, and the manifests have no ${kind} "${name}"; ${how}`);
}

/**
 * The NAMESPACE/NAME (or NAME) the pod lookup takes, for what --pod was given as. A two-part
 * value is a namespace and a pod first, as it always was: only when no such pod exists is its
 * first part read as kubectl's TYPE (a namespace may well be called "deploy").
 */
export function podSpec(spec: string, model: ClusterModel | undefined, namespace: string | undefined): string {
  const parts = spec.split('/');
  if (parts.length === 1) return spec;
  if (parts.length > 2 || parts.some((p) => p === '')) {
    throw new Error(`--pod ${spec}: give the pod as NAMESPACE/NAME, NAME (in --namespace) or pod/NAME`);
  }
  const [first, name] = parts as [string, string];
  if (model?.pods.some((p) => p.namespace === first && p.name === name)) return spec;
  const type = first.toLowerCase();
  const ns = namespace ?? 'default';
  if (POD_NAMES.has(type)) return `${ns}/${name}`;
  const kind = WORKLOAD_NAMES.get(type);
  if (kind) throw workloadError(model, spec, kind, name, ns);
  return spec;
}
