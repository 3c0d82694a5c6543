// The command-line options of the plugins that read manifests (kubernetes, k8s_gateway), added to
// the chain's RuntimeOptions once, here: the chain knows no cluster model, and each plugin reads
// the option without depending on the other being compiled in.
import type { ClusterOptions } from '../cluster/model/model.js';

declare module '../chain/registry.js' {
  interface RuntimeOptions {
    /** Service CIDRs, nodes and limits from the command line, for the plugins that read manifests. */
    cluster: ClusterOptions;
  }
}
