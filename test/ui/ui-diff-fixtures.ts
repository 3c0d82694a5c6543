// Two trees for the ui's Diff view, from the `clusterdns diff` fixtures: NEW adds the Service
// cart, moves the ExternalName legacy to another target, removes the Service billing/invoices,
// and changes a TXT record's hostile value (markup and a control character), served from a
// DNSEndpoint through k8s_gateway.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BASE, BILLING, CART, COREFILE, SHOP, edit, type Tree } from '../cli/diff-fixtures.js';

const txt = (target: string): string => `apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata:
  name: txt
  namespace: shop
spec:
  endpoints:
  - dnsName: txt.example.com
    recordType: TXT
    targets: [${JSON.stringify(target)}]
`;

export const HOSTILE_TXT = `<script>alert('txt')</script>"><img src=x onerror=alert('txt-img')>\u0001`;

export const OLD_TREE: Tree = { ...BASE, 'txt.yaml': txt('harmless') };
export const NEW_TREE: Tree = {
  ...BASE,
  'shop.yaml': edit(SHOP, 'externalName: old.example.net', 'externalName: new.example.net') + CART,
  // The namespace stays; its one Service goes.
  'billing.yaml': BILLING.slice(0, BILLING.indexOf('---\n')),
  'txt.yaml': txt(HOSTILE_TXT),
};

export interface DiffTrees {
  conf: string;
  old: string;
  new: string;
  remove(): void;
}

function writeTree(dir: string, tree: Tree): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(tree)) writeFileSync(path.join(dir, name), text);
}

export function diffTrees(): DiffTrees {
  const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-ui-diff-'));
  const conf = path.join(dir, 'Corefile');
  writeFileSync(conf, edit(COREFILE, 'resources Ingress', 'resources Ingress DNSEndpoint'));
  const trees = { old: path.join(dir, 'old'), new: path.join(dir, 'new') };
  writeTree(trees.old, OLD_TREE);
  writeTree(trees.new, NEW_TREE);
  return { conf, ...trees, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
