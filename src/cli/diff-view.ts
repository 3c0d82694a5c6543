// `clusterdns diff`'s view of a manifest feed, built in the feed's loader thread where the model
// is: the side's findings and the index that places its record sets. The model itself never
// crosses threads: at 10k Services copying it cost more than the side's findings and places.
import { checkLoadedModel, type ModelFinding, modelInfos } from '../cluster/check.js';
import type { ViewInput, ViewOutput } from '../cluster/feed-protocol.js';
import type { ViewSpec } from '../cluster/feed-thread.js';
import { type ProvenanceIndex, provenanceIndex } from './diff-provenance.js';

export interface DiffView {
  /** What `clusterdns check` reports of the manifests: the load's findings, the model checks and the statuses. */
  readonly findings: readonly ModelFinding[];
  readonly index: ProvenanceIndex;
}

/** Runs in the loader thread. */
export function buildView(input: ViewInput): ViewOutput {
  const { model } = input;
  const view: DiffView = { findings: [...checkLoadedModel(model), ...modelInfos(model)], index: provenanceIndex(model) };
  return { parts: [{ part: view }] };
}

export function diffView(): ViewSpec<DiffView> {
  return {
    module: new URL('./diff-view.js', import.meta.url).href,
    build: buildView,
    args: {},
    assemble: () => {
      let view: DiffView | undefined;
      return {
        add: (part) => void (view = part as DiffView),
        finish: () => {
          if (!view) throw new Error('diff: the findings and places of a side did not arrive');
          return view;
        },
      };
    },
  };
}
