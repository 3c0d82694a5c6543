// Reading workloads (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob) as the API
// server admits them: selector, pod template, replicas, with their defaults and validation;
// emulate/workloads.ts plays their controllers.
import type { ContainerPort, ObjectMeta, WorkloadInfo } from '../model/model.js';
import { jsonExcerpt } from '../model/finding.js';
import { type LabelSelector, isEmptySelector, matchesSelector } from '../model/selector.js';
import { readContainerPorts, readOwner, readPodDNS } from './pods.js';
import { readLabelSelector } from './selector.js';
import { type Checker, hasServerSetMeta, isDns1123Label, isDns1123Subdomain, isObj, type Obj } from './validate.js';

export type WorkloadKind = WorkloadInfo['kind'];

export interface PodTemplate {
  /** The template as written, for the pod-template-hash. */
  readonly raw: Obj;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly hostname?: string;
  readonly subdomain?: string;
  readonly hostNetwork: boolean;
  readonly nodeName?: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly containerPorts: readonly ContainerPort[];
  /** The template's DNS fields (dnsPolicy, dnsConfig, hostAliases, setHostnameAsFQDN), copied to derived pods. */
  readonly dns: ReturnType<typeof readPodDNS>;
}

/** A workload as read from a manifest. */
export interface WorkloadDraft {
  readonly kind: WorkloadKind;
  readonly meta: ObjectMeta;
  readonly check: Checker;
  /** spec.selector; for Jobs only when spec.manualSelector is true. */
  readonly selector?: LabelSelector;
  /** Pods the controller would run (replicas; for Jobs min(parallelism, completions)). */
  readonly replicas: number;
  readonly template?: PodTemplate;
  readonly serviceName?: string;
  readonly ordinalStart: number;
  readonly indexed: boolean;
  /** The controller owner of the workload itself (a ReplicaSet owned by a Deployment). */
  readonly owner?: { kind: string; name: string };
  /** False when the workload cannot run pods (invalid, suspended, finished); a warning was given when it matters. */
  readonly runnable: boolean;
}

function readCount(spec: Obj, key: string, path: string, check: Checker, dflt: number): number {
  const v = spec[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    // ValidateNonnegativeField (replicas, parallelism, completions, ordinals.start).
    check.error(`${path} ${jsonExcerpt(v)} must be a non-negative integer`, path, 'invalid-count');
    return 0;
  }
  return v;
}

function readTemplate(t: Obj, check: Checker, path: string): PodTemplate {
  const md = check.obj(t, 'metadata', `${path}.metadata`);
  const spec = check.obj(t, 'spec', `${path}.spec`);
  const hostname = check.str(spec, 'hostname', `${path}.spec.hostname`);
  const subdomain = check.str(spec, 'subdomain', `${path}.spec.subdomain`);
  // ValidatePodSpec: hostname and subdomain are DNS-1123 labels.
  if (hostname && !isDns1123Label(hostname)) {
    check.error(
      `${path}.spec.hostname ${jsonExcerpt(hostname)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-'`,
      `${path}.spec.hostname`,
      'invalid-hostname',
    );
  }
  if (subdomain && !isDns1123Label(subdomain)) {
    check.error(
      `${path}.spec.subdomain ${jsonExcerpt(subdomain)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-'`,
      `${path}.spec.subdomain`,
      'invalid-subdomain',
    );
  }
  const nodeName = check.str(spec, 'nodeName', `${path}.spec.nodeName`);
  return {
    raw: t,
    // ValidatePodTemplateSpec: ValidateLabels and ValidateAnnotations of the template's metadata.
    labels: check.labels(md, 'labels', `${path}.metadata.labels`),
    annotations: check.annotations(md, 'annotations', `${path}.metadata.annotations`),
    ...(hostname ? { hostname } : {}),
    ...(subdomain ? { subdomain } : {}),
    hostNetwork: check.bool(spec, 'hostNetwork', `${path}.spec.hostNetwork`) ?? false,
    ...(nodeName ? { nodeName } : {}),
    nodeSelector: check.stringMap(spec, 'nodeSelector', `${path}.spec.nodeSelector`),
    containerPorts: readContainerPorts(spec, check, `${path}.spec`),
    dns: readPodDNS(spec, check, `${path}.spec`),
  };
}

function jobFinished(o: Obj): boolean {
  const status = o['status'];
  if (!isObj(status) || !Array.isArray(status['conditions'])) return false;
  return status['conditions'].some((c) => isObj(c) && (c['type'] === 'Complete' || c['type'] === 'Failed') && c['status'] === 'True');
}

/** A CronJob's name leaves room for the 11 characters of its Jobs' suffix (ValidateCronJobCreate). */
const CRONJOB_NAME_MAX = 52;

/**
 * The pod template's restartPolicy (default Always, SetDefaults_PodSpec): Jobs need OnFailure or
 * Never (batch validateJobSpec), the apps workloads Always (ValidatePodTemplateSpecForReplicaSet,
 * ValidateStatefulSetSpec, ValidateDaemonSetSpec).
 */
function checkRestartPolicy(template: unknown, path: string, job: boolean, check: Checker): void {
  const spec = isObj(template) ? template['spec'] : undefined;
  const rp = isObj(spec) ? spec['restartPolicy'] : undefined;
  const policy = typeof rp === 'string' && rp !== '' ? rp : 'Always';
  // Only a finding asks where: the field lines cost a parse of the object's document.
  const where = (): string => check.written(`${path}.spec.restartPolicy`, `${path}.spec`, path, 'spec');
  if (job && policy !== 'OnFailure' && policy !== 'Never') {
    check.error(
      `${path}.spec.restartPolicy ${rp === undefined ? 'is unset (so Always)' : jsonExcerpt(rp)}; a Job's pods need restartPolicy OnFailure or Never, set one`,
      where(),
      'restart-policy',
    );
  } else if (!job && policy !== 'Always') {
    check.error(`${path}.spec.restartPolicy ${jsonExcerpt(rp)} is not allowed here; a controller's pods restart Always, remove it`, where(), 'restart-policy');
  }
}

export function toWorkload(o: Obj, meta: ObjectMeta, check: Checker, kind: WorkloadKind): WorkloadDraft {
  const spec = check.obj(o, 'spec', 'spec');
  const owner = readOwner(o);
  const base = { kind, meta, check, ordinalStart: 0, indexed: false, ...(owner ? { owner } : {}) };
  if (kind === 'CronJob') {
    // ValidateCronJobCreate: the name is at most 52 characters.
    if (meta.name.length > CRONJOB_NAME_MAX) {
      check.error(
        `name ${jsonExcerpt(meta.name)} is ${meta.name.length} characters; a CronJob's name may have at most ${CRONJOB_NAME_MAX}, shorten it`,
        'metadata.name',
        'invalid-name',
      );
    }
    const jt = spec['jobTemplate'];
    const jspec = isObj(jt) ? jt['spec'] : undefined;
    checkRestartPolicy(isObj(jspec) ? jspec['template'] : undefined, 'spec.jobTemplate.spec.template', true, check);
    return { ...base, replicas: 0, runnable: false };
  }
  // ValidateStatefulSet: ValidateStatefulSetName is NameIsDNSLabel (the pods' hostnames); readMeta
  // already reported a name that is not even a subdomain. ValidateStatefulSetUpdate does not check
  // the name again, so one from a cluster (server-set metadata) may be an older subdomain name.
  if (kind === 'StatefulSet' && isDns1123Subdomain(meta.name) && !isDns1123Label(meta.name) && hasServerSetMeta(o)) {
    check.warn(
      `name ${jsonExcerpt(meta.name)} is not a DNS-1123 label, which a new StatefulSet needs; this one was read from a cluster, so it is kept`,
      'metadata.name',
      'invalid-name',
    );
  } else if (kind === 'StatefulSet' && isDns1123Subdomain(meta.name) && !isDns1123Label(meta.name)) {
    check.error(
      `name ${jsonExcerpt(meta.name)} is not a valid DNS-1123 label (a StatefulSet's name is its pods' hostname prefix); use at most 63 lower-case letters, digits and '-'`,
      'metadata.name',
      'invalid-name',
    );
  }

  let runnable = true;
  const tObj = spec['template'];
  let template: PodTemplate | undefined;
  if (isObj(tObj)) template = readTemplate(tObj, check, 'spec.template');
  else {
    // ValidatePodTemplateSpec via the kind's spec validation: the template and its containers are required.
    check.error('has no spec.template; add the pod template (metadata.labels and spec.containers)', 'spec', 'template-required');
    runnable = false;
  }
  if (template) checkRestartPolicy(tObj, 'spec.template', kind === 'Job', check);

  let selector: LabelSelector | undefined;
  let replicas = 1;
  let serviceName: string | undefined;
  let ordinalStart = 0;
  let indexed = false;
  if (kind === 'Job') {
    const parallelism = readCount(spec, 'parallelism', 'spec.parallelism', check, 1);
    const completionsRaw = spec['completions'];
    const completions = completionsRaw === undefined || completionsRaw === null ? undefined : readCount(spec, 'completions', 'spec.completions', check, 1);
    replicas = completions === undefined ? parallelism : Math.min(parallelism, completions);
    indexed = spec['completionMode'] === 'Indexed';
    if (spec['manualSelector'] === true) selector = readLabelSelector(spec, 'selector', 'spec.selector', check, true);
    if (spec['suspend'] === true || jobFinished(o)) runnable = false;
  } else {
    if (kind !== 'DaemonSet') replicas = readCount(spec, 'replicas', 'spec.replicas', check, 1);
    selector = readLabelSelector(spec, 'selector', 'spec.selector', check, true);
    // ValidateDeploymentSpec, ValidateReplicaSetSpec, ValidateStatefulSetSpec,
    // ValidateDaemonSetSpec: spec.selector is required and not empty, and the template's labels
    // match it ("`selector` does not match template `labels`").
    if (selector === undefined || isEmptySelector(selector)) {
      check.error(
        `${selector === undefined ? 'has no spec.selector' : 'has an empty spec.selector'}; apps/v1 requires one, add spec.selector.matchLabels matching the template labels`,
        check.written('spec.selector', 'spec'),
        'selector-required',
      );
      runnable = false;
    } else if (template && !matchesSelector(selector, template.labels)) {
      check.error(
        '`selector` does not match template `labels`: spec.template.metadata.labels must satisfy spec.selector; make them agree',
        check.written('spec.template.metadata.labels', 'spec.template.metadata', 'spec.template'),
        'selector-mismatch',
      );
      runnable = false;
    }
    if (kind === 'StatefulSet') {
      const sn = check.str(spec, 'serviceName', 'spec.serviceName');
      if (sn) {
        serviceName = sn;
        // ValidateStatefulSetSpec does not check serviceName, but it becomes every pod's
        // spec.subdomain, which ValidatePodSpec requires to be a DNS-1123 label: the pods fail.
        if (!isDns1123Label(sn)) {
          check.warn(
            `spec.serviceName ${jsonExcerpt(sn)} is not a valid DNS-1123 label, so the API server rejects every pod (it is their subdomain) and it runs none; use the headless Service's name`,
            'spec.serviceName',
            'invalid-service-name',
          );
          runnable = false;
        }
      }
      const ordinals = check.obj(spec, 'ordinals', 'spec.ordinals');
      ordinalStart = readCount(ordinals, 'start', 'spec.ordinals.start', check, 0);
    }
  }
  return {
    ...base,
    ...(selector ? { selector } : {}),
    replicas,
    ...(template ? { template } : {}),
    ...(serviceName ? { serviceName } : {}),
    ordinalStart,
    indexed,
    runnable,
  };
}
