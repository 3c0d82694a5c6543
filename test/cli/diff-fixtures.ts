// The trees `clusterdns diff` is tested on: a Corefile with a cluster zone and a k8s_gateway zone,
// a base tree of two namespaces, and the edits of the test table. Cluster and pod IPs are written
// out, so every expected record is the manifest's own value.

export const COREFILE = `cluster.local in-addr.arpa ip6.arpa {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        ttl 30
    }
}
example.com {
    k8s_gateway example.com {
        resources Ingress
        ttl 60
    }
}
`;

export const SHOP = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: shop
spec:
  clusterIP: 10.96.0.20
  selector: {app: api}
  ports:
  - name: http
    port: 80
---
apiVersion: v1
kind: Pod
metadata:
  name: api-1
  namespace: shop
  labels: {app: api}
spec:
  containers: [{name: api, image: api}]
status:
  podIP: 10.244.0.10
---
apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: shop
spec:
  clusterIP: None
  selector: {app: db-v1}
---
apiVersion: v1
kind: Pod
metadata:
  name: db-a
  namespace: shop
  labels: {app: db-v1}
spec:
  containers: [{name: db, image: db}]
status:
  podIP: 10.244.0.21
---
apiVersion: v1
kind: Pod
metadata:
  name: db-b
  namespace: shop
  labels: {app: db-v2}
spec:
  containers: [{name: db, image: db}]
status:
  podIP: 10.244.0.22
---
apiVersion: v1
kind: Service
metadata:
  name: legacy
  namespace: shop
spec:
  type: ExternalName
  externalName: old.example.net
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: www
  namespace: shop
spec:
  rules:
  - host: www.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: api, port: {number: 80}}
status:
  loadBalancer:
    ingress:
    - ip: 203.0.113.10
`;

export const BILLING = `apiVersion: v1
kind: Namespace
metadata:
  name: billing
---
apiVersion: v1
kind: Service
metadata:
  name: invoices
  namespace: billing
spec:
  clusterIP: 10.96.0.30
  selector: {app: invoices}
  ports:
  - name: https
    port: 443
`;

export type Tree = Readonly<Record<string, string>>;

export const BASE: Tree = { 'shop.yaml': SHOP, 'billing.yaml': BILLING };

/** `text` with `from` replaced by `to`, failing when `from` is not in it (an edit that does nothing). */
export function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`edit: ${JSON.stringify(from)} is not in the text`);
  return text.replace(from, to);
}

export const CART = `---
apiVersion: v1
kind: Service
metadata:
  name: cart
  namespace: shop
spec:
  clusterIP: 10.96.0.40
  selector: {app: api}
  ports:
  - name: http
    port: 8080
`;

export const SHOP_HOST = `  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: api, port: {number: 80}}
  - host: www.example.com`;
