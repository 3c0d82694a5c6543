// --pod as kubectl users write it: pod/NAME is a pod, deploy/NAME a workload whose pods are named.
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { loadManifests } from '../../src/cluster/load.js';
import { podSpec, workloadPods } from '../../src/cli/pod-ref.js';
import { repoRoot } from '../helpers/server.js';

const { model } = loadManifests([path.join(repoRoot, 'examples/manifests')]);

describe('--pod', () => {
  it('takes NAMESPACE/NAME and NAME as before', () => {
    expect(podSpec('apps/db-0', model, undefined)).toBe('apps/db-0');
    expect(podSpec('db-0', model, 'apps')).toBe('db-0');
  });

  it('takes pod/NAME (and pods/, po/) as a pod in --namespace', () => {
    expect(podSpec('pod/db-0', model, 'apps')).toBe('apps/db-0');
    expect(podSpec('pods/db-0', model, 'apps')).toBe('apps/db-0');
    expect(podSpec('po/x', model, undefined)).toBe('default/x');
  });

  it('names the pods of a workload given in its place', () => {
    const sts = workloadPods(model, model.workloads!.find((w) => w.kind === 'StatefulSet' && w.name === 'db')!).map((p) => p.name);
    expect(sts).toEqual(['db-0']);
    expect(() => podSpec('sts/db', model, 'apps')).toThrow(
      /^--pod sts\/db names a StatefulSet, not a pod; its pods are apps\/db-0: pass one of them, e\.g\. --pod apps\/db-0$/,
    );
    expect(() => podSpec('statefulset.apps/db', model, 'apps')).toThrow(/names a StatefulSet.*--pod apps\/db-0$/);
    for (const form of ['deploy/dual', 'deployment/dual', 'Deployment/dual', 'deployments.apps/dual']) {
      expect(() => podSpec(form, model, 'apps')).toThrow(/names a Deployment, not a pod; its pods are apps\/dual-[a-z0-9]+-[a-z0-9]{5}, apps\/dual-/);
    }
  });

  it('finds the workload in another namespace, and says when there is none', () => {
    expect(() => podSpec('deploy/dual', model, undefined)).toThrow(
      /namespace "default" has no Deployment "dual" \(namespace apps has\); its pods there are apps\/dual-/,
    );
    expect(() => podSpec('ds/agent', model, 'apps')).toThrow(
      /names a DaemonSet, not a pod, and the manifests have no DaemonSet "agent"; pass a pod as NAMESPACE\/NAME, NAME \(in --namespace\) or pod\/NAME/,
    );
    expect(() => podSpec('a/b/c', model, undefined)).toThrow(/give the pod as NAMESPACE\/NAME/);
  });

  it('reads a real namespace called like a type as a namespace', () => {
    const withNs = { ...model, pods: [...model.pods, { ...model.pods[0]!, namespace: 'deploy', name: 'web' }] };
    expect(podSpec('deploy/web', withNs, undefined)).toBe('deploy/web');
  });
});
