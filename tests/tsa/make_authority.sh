#!/usr/bin/env bash
# A time-stamping authority made with openssl, answering real RFC 3161 queries, for the
# token tests (tests/tsa.rs):  make_authority.sh OUT_DIR SHA256_HEX
# Writes a root, TSAs signing with RSA (SHA-256), ECDSA P-256 and P-384, one whose
# certificate expired before it signed, a root that issued none of them, TSAs whose
# certificate paths break RFC 5280 (issued by a TSA that is no CA, under an intermediate
# that expired or is not yet valid, past a path length constraint, under a CA whose key
# usage forbids keyCertSign) and one under a good intermediate, and a response from each
# for the digest given (`openssl ts -query -digest H -sha256 -cert`), plus the bare token
# of the RSA one and a refusal (a SHA-1 query the authority rejects).
set -euo pipefail
out=$1 digest=$2
mkdir -p "$out" && cd "$out"
quiet() { "$@" >/dev/null 2>&1 || { echo "make_authority.sh: $* failed" >&2; "$@"; exit 1; }; }
cat > tsa_ext.cnf <<'CNF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,nonRepudiation
extendedKeyUsage=critical,timeStamping
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
CNF
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout root.key -out root.pem -days 3650 \
  -subj "/CN=aeplens test root" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign"
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout other-root.key -out other-root.pem \
  -days 3650 -subj "/CN=a root nobody trusts"
issue() { # NAME CN KEYGEN...
  local name=$1 cn=$2; shift 2
  quiet "$@" -out "$name.key"
  quiet openssl req -new -key "$name.key" -out "$name.csr" -subj "/CN=$cn"
  quiet openssl x509 -req -in "$name.csr" -CA root.pem -CAkey root.key -CAcreateserial \
    -out "$name.pem" -days 3650 -extfile tsa_ext.cnf
}
issue rsa "aeplens RSA TSA" openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048
issue ec "aeplens ECDSA TSA" openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256
issue ec384 "aeplens P-384 TSA" openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384
# A TSA certificate valid in 2020 only: `openssl ca` sets its dates.
mkdir -p ca/new && : > ca/index.txt && echo 1000 > ca/serial
cat > ca.cnf <<'CNF'
[ ca ]
default_ca = test_ca
[ test_ca ]
dir = ./ca
database = $dir/index.txt
new_certs_dir = $dir/new
serial = $dir/serial
certificate = ./root.pem
private_key = ./root.key
default_md = sha256
policy = any
unique_subject = no
[ any ]
commonName = supplied
[ tsa_ext ]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=critical,timeStamping
CNF
quiet openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out expired.key
quiet openssl req -new -key expired.key -out expired.csr -subj "/CN=aeplens expired TSA"
quiet openssl ca -batch -config ca.cnf -extensions tsa_ext -startdate 20200101000000Z \
  -enddate 20210101000000Z -in expired.csr -out expired.pem
cat >> ca.cnf <<'CNF'
[ sub_ca ]
basicConstraints=critical,CA:TRUE
keyUsage=critical,keyCertSign,cRLSign
[ sub_ca_pathlen0 ]
basicConstraints=critical,CA:TRUE,pathlen:0
keyUsage=critical,keyCertSign,cRLSign
[ sub_ca_no_certsign ]
basicConstraints=critical,CA:TRUE
keyUsage=critical,digitalSignature
CNF
# NAME CN EXTENSIONS ISSUER [START END]: a P-256 key and its certificate from ISSUER.
sign() {
  local name=$1 cn=$2 ext=$3 issuer=$4 dates=(-days 3650)
  [ $# -gt 4 ] && dates=(-startdate "$5" -enddate "$6")
  quiet openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$name.key"
  quiet openssl req -new -key "$name.key" -out "$name.csr" -subj "/CN=$cn"
  quiet openssl ca -batch -notext -config ca.cnf -cert "$issuer.pem" -keyfile "$issuer.key" \
    -extensions "$ext" "${dates[@]}" -in "$name.csr" -out "$name.pem"
}
sign rogue "aeplens TSA issued by a TSA" tsa_ext rsa
sign stale-ca "aeplens expired CA" sub_ca root 20200101000000Z 20210101000000Z
sign stale "aeplens TSA under an expired CA" tsa_ext stale-ca
sign early-ca "aeplens CA of 2040" sub_ca root 20400101000000Z 20410101000000Z
sign early "aeplens TSA under a future CA" tsa_ext early-ca
sign len0-ca "aeplens CA with pathlen 0" sub_ca_pathlen0 root
sign len1-ca "aeplens CA under pathlen 0" sub_ca len0-ca
sign deep "aeplens TSA past a path length" tsa_ext len1-ca
sign nosign-ca "aeplens CA without keyCertSign" sub_ca_no_certsign root
sign nosign "aeplens TSA under a CA without keyCertSign" tsa_ext nosign-ca
sign good-ca "aeplens intermediate CA" sub_ca root
sign chained "aeplens TSA under an intermediate" tsa_ext good-ca
# The certificates each token carries beside its signer's.
for name in rsa ec ec384 expired; do cp root.pem "$name.chain.pem"; done
cat rsa.pem root.pem > rogue.chain.pem
cat stale-ca.pem root.pem > stale.chain.pem
cat early-ca.pem root.pem > early.chain.pem
cat len1-ca.pem len0-ca.pem root.pem > deep.chain.pem
cat nosign-ca.pem root.pem > nosign.chain.pem
cat good-ca.pem root.pem > chained.chain.pem
quiet openssl ts -query -digest "$digest" -sha256 -cert -out query.tsq
for name in rsa ec ec384 expired rogue stale early deep nosign chained; do
  md=sha256; [ "$name" = ec384 ] && md=sha384
  echo 01 > "$name.serial"
  cat > "$name.cnf" <<CNF
[ tsa ]
default_tsa = this
[ this ]
serial = ./$name.serial
signer_cert = ./$name.pem
certs = ./$name.chain.pem
signer_key = ./$name.key
signer_digest = $md
default_policy = 1.3.6.1.4.1.57264.1.1
other_policies = 1.3.6.1.4.1.57264.1.2
digests = sha256, sha384, sha512
accuracy = secs:1, millisecs:500
clock_precision_digits = 3
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
CNF
  quiet openssl ts -reply -queryfile query.tsq -config "$name.cnf" -section this -out "$name.tsr"
done
quiet openssl ts -reply -in rsa.tsr -token_out -out rsa.token.der
# A SHA-1 query, which the authority (digests = sha256, sha384, sha512) rejects: a
# TimeStampResp with status rejection and no token.
quiet openssl ts -query -data ca.cnf -sha1 -cert -out sha1.tsq
quiet openssl ts -reply -queryfile sha1.tsq -config rsa.cnf -section this -out refused.tsr
