// The JSON the `clusterdns ui` server sends under /api/ and the page reads: one set of types for
// both sides (the page imports them for their types only).

/** A manifest position: `file` as the CLI prints it (relative to the directory the server runs in). */
export interface UiSource {
  readonly file: string;
  readonly line: number;
}

export interface UiRecord {
  readonly name: string;
  readonly ttl: number;
  readonly type: string;
  readonly data: string;
  readonly zone: string;
}

export interface UiFinding {
  readonly file: string;
  readonly line: number;
  readonly severity: 'error' | 'warning' | 'info';
  readonly code: string;
  readonly message: string;
}

/** A manifest object (Service, Pod, workload, Ingress...) with its records and the findings about it. */
export interface UiObject {
  readonly kind: string;
  readonly name: string;
  readonly source?: UiSource;
  readonly records: readonly UiRecord[];
  readonly findings: readonly UiFinding[];
}

export interface UiNamespace {
  /** '' gathers what belongs to no namespace (the zone apex, reverse records without a target). */
  readonly name: string;
  readonly source?: UiSource;
  readonly objects: readonly UiObject[];
}

/** GET /api/records. */
export interface RecordsResponse {
  /** Bumped by every reload the server applies; /api/events carries it. */
  readonly generation: number;
  readonly zones: readonly string[];
  readonly namespaces: readonly UiNamespace[];
  /** Findings no object of the model owns (Corefile errors, rejected objects, files). */
  readonly findings: readonly UiFinding[];
  readonly summary: { readonly errors: number; readonly warnings: number; readonly infos: number };
  readonly recordCount: number;
}

/** GET /api/pods: what the Resolve view offers. */
export interface PodsResponse {
  readonly generation: number;
  readonly pods: readonly { readonly namespace: string; readonly name: string; readonly derived: boolean }[];
  readonly namespaces: readonly string[];
  readonly libcs: readonly string[];
}

/** One query of a resolve walk. */
export interface UiQuery {
  readonly name: string;
  readonly type: string;
  /** The search domain appended to the name typed, '' for the name as typed (absolute). */
  readonly searchDomain: string;
  readonly rcode: string;
  /** NXDOMAIN, NODATA (NOERROR without records), an answer, or another rcode. */
  readonly outcome: 'NXDOMAIN' | 'NODATA' | 'answer' | 'other';
  readonly answers: readonly string[];
  readonly malformed: boolean;
}

/** GET /api/resolve. */
export interface ResolveResponse {
  readonly generation: number;
  /** Who asks: `pod NS/NAME` or `a new pod in namespace NS`. */
  readonly from: string;
  readonly libc: string;
  /** getaddrinfo(AF_UNSPEC) NAME, res_search(SRV) NAME... */
  readonly call: string;
  readonly resolvConf: string;
  readonly parsed: string;
  readonly notes: readonly string[];
  readonly queries: readonly UiQuery[];
  readonly result: { readonly status: string; readonly error?: string; readonly answers: readonly string[]; readonly source: string };
  readonly roundTrips: number;
  readonly withoutAutopath?: { readonly queries: number; readonly roundTrips: number };
  /** What `resolve --audit` suggests for this name: a trailing dot, lower ndots, autopath. */
  readonly fixes: readonly string[];
}

/** GET /api/manifest?file=F. */
export interface ManifestResponse {
  readonly file: string;
  readonly lines: readonly string[];
}

/** An error of an /api/ call (status 400 or 404). */
export interface ErrorResponse {
  readonly error: string;
}

/** The data of a `change` event on /api/events. */
export interface ChangeEvent {
  readonly generation: number;
  /** false when the changed files did not load; the page keeps the data it shows. */
  readonly ok: boolean;
}

/** /api/info: what the page was started with. */
export interface InfoResponse {
  /** Present when started with two trees or revisions: their labels (Records and Resolve show `new`). */
  readonly diff?: { readonly old: string; readonly new: string };
}

/**
 * /api/diff-sources: the files of each side the page serves, by the path /api/diff shows (a side's
 * `source.file`) to the `file` parameter of /manifest. A removed set's source is OLD's, the others
 * NEW's; a path not listed is not served (OLD's files usually: only the loaded manifests are).
 */
export interface DiffSourcesResponse {
  readonly generation: number;
  readonly new: Readonly<Record<string, string>>;
  readonly old: Readonly<Record<string, string>>;
}

/** One record set of /api/diff (`clusterdns diff --output json`). */
export interface DiffChange {
  readonly change: 'added' | 'removed' | 'changed';
  readonly zone: string;
  readonly name: string;
  readonly type: string;
  readonly old?: { readonly ttl: number; readonly data: readonly string[] };
  readonly new?: { readonly ttl: number; readonly data: readonly string[] };
  readonly object?: { readonly kind: string; readonly namespace?: string; readonly name: string };
  readonly source?: UiSource;
}

export interface DiffFinding {
  readonly file: string;
  readonly line: number;
  readonly severity: string;
  readonly code: string;
  readonly message: string;
  readonly object?: { readonly kind: string; readonly namespace?: string; readonly name: string };
}

/** /api/diff: the document `clusterdns diff --output json` prints. */
export interface DiffResponse {
  readonly version: number;
  readonly old: string;
  readonly new: string;
  readonly summary: Readonly<Record<'added' | 'removed' | 'changed' | 'findingsAppeared' | 'findingsDisappeared', number>>;
  readonly namespaces: readonly { readonly namespace: string; readonly changes: readonly DiffChange[] }[];
  readonly findings: { readonly appeared: readonly DiffFinding[]; readonly disappeared: readonly DiffFinding[] };
}
