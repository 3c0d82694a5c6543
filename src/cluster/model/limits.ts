// Bounds on what one manifest file or object may cost to read: set through ClusterOptions
// (model.ts), applied by the readers (read/yaml-docs.ts).

/** Bounds on what one manifest file or object may cost to read. */
export interface ManifestLimits {
  /** Largest manifest file read, in bytes. */
  readonly maxFileBytes: number;
  /** Largest object (one YAML/JSON document), in bytes of its value with every alias expanded. */
  readonly maxObjectBytes: number;
  /** Alias expansions allowed per anchor (the `yaml` package's maxAliasCount). */
  readonly maxAliases: number;
}

// Kubernetes itself stores objects of at most 1.5 MiB (etcd's request limit), so a 4 MiB object
// can never have come from a cluster; 64 MiB files hold tens of thousands of objects.
export const defaultManifestLimits: ManifestLimits = {
  maxFileBytes: 64 * 1024 * 1024,
  maxObjectBytes: 4 * 1024 * 1024,
  maxAliases: 100,
};
