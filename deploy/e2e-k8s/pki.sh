#!/bin/bash
# pki.sh DIR: a throw-away CA (valid 2 days), the apiserver's serving certificate
# (SANs 127.0.0.1, the Service IP 10.0.0.1, the node 10.245.0.1), a client
# certificate and kubeconfig for admin, kubelet, controller-manager, scheduler and
# kube-proxy, and the service-account key pair. Everything stays in DIR.
set -euo pipefail
mkdir -p "$1" && cd "$1"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=callbus-e2e-ca" 2>/dev/null
cert() { # name CN O [SAN]
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2${3:+/O=$3}" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n%s\n' "${4:+subjectAltName=$4}" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 2 -extfile "$1.ext" 2>/dev/null
}
kubeconfig() { # name
  cat >"$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: $(base64 -w0 ca.crt)}
users:
- name: $1
  user: {client-certificate-data: $(base64 -w0 "$1.crt"), client-key-data: $(base64 -w0 "$1.key")}
contexts:
- name: e2e
  context: {cluster: e2e, user: $1}
current-context: e2e
KC
}
cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:10.0.0.1,IP:10.245.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert admin admin system:masters
cert kubelet system:node:local system:nodes "IP:127.0.0.1,IP:10.245.0.1,DNS:localhost,DNS:local"
cert controller-manager system:kube-controller-manager
cert scheduler system:kube-scheduler
cert kube-proxy system:kube-proxy
for n in admin kubelet controller-manager scheduler kube-proxy; do kubeconfig $n; done
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
