// What k8s_gateway's loader thread (load-worker.ts) and the serving thread (loader.ts) say to
// each other: one request in, one reply out.
import type { ClusterOptions, Finding } from '../../cluster/model.js';
import type { AdmissionHistory } from '../../cluster/history.js';
import type { HistoryRequest } from '../../cluster/load.js';
import type { HostIndexData } from './hosts.js';
import type { K8sGatewayConfig } from './setup.js';

export interface GatewayLoadRequest {
  paths: string[];
  cluster: Partial<ClusterOptions> | undefined;
  /** Plain data: the thread rebuilds the label selectors from their text. */
  cfg: K8sGatewayConfig;
  /** What the previous load read (a rejected object's previous version stays served); absent at start. */
  history?: AdmissionHistory;
}

/** A load's result besides the index: what to log, and what the next load needs. */
export interface GatewayLoadSummary {
  findings: Finding[];
  /** Objects left out because the API server would reject them. */
  rejected: number;
  history?: AdmissionHistory;
}

export type GatewayLoadReply =
  | ({ type: 'done'; index: HostIndexData } & GatewayLoadSummary)
  | { type: 'error'; findings?: Finding[]; message?: string; stack?: string };

/** The admission history a load reads and keeps (cluster/history.ts). */
export function gatewayHistoryRequest(req: GatewayLoadRequest): HistoryRequest {
  const budget = req.cluster?.admissionHistoryBytes;
  return { ...(req.history ? { previous: req.history } : {}), ...(budget !== undefined ? { budgetBytes: budget } : {}) };
}
