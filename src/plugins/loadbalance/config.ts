// The loadbalance plugin's settings as setup.ts reads them from the Corefile and plugin.ts
// applies them.

export interface LoadbalanceConfig {
  /** The only policy implemented. */
  policy: 'round_robin';
}
