import { defineConfig } from 'vitest/config';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  resolve: {
    // Tests import the library the way users do: `import { loadCluster } from 'clusterdns'`.
    alias: { clusterdns: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  },
  test: {
    // The built-in default Corefile forwards to a resolv.conf: in tests, to a loopback address
    // where nothing listens, so no test ever sends a query off the machine.
    env: { CLUSTERDNS_UPSTREAM_RESOLV_CONF: fileURLToPath(new URL('./test/fixtures/no-upstream.resolv.conf', import.meta.url)) },
    // Vitest's default is one file at a time less than the cores (one on a 2-core CI machine), but
    // most files spend their time waiting on the servers, etcd members and clients they start:
    // two at once on 2 cores took the suite from 582 s to 384 s with every test passing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    minWorkers: 1,
    // No test server touches the user's cache directory (manifest images).
    globalSetup: ['./test/helpers/global-cache.ts'],
    testTimeout: 30000,
    hookTimeout: 60000,
  },
});
