#!/usr/bin/env python3
"""Curlew test fixtures: a complete set of TLS certificates, made at test time, never committed.

Usage: tls_fixtures.py DIRECTORY

Writes PEM files into DIRECTORY (created if missing) and prints one JSON object to stdout:

    {
      "directory": "/tmp/...",
      "files": {"ca": ".../ca.pem", "ca.key": ..., "ca.hashed": ".../ca.hashed", "leaf": ..., ...},
      "pins": {"leaf": "sha256//...", "intermediate": "sha256//...", "ca": "sha256//...", ...},
      "client_key_password": "...",
      "ca_subject_hash": "1a2b3c4d"
    }

Every key is ECDSA P-256 (generation takes microseconds) unless named `_p384`; private keys are unencrypted PKCS#8 PEM,
except `client.key.encrypted` (PKCS#8, encrypted with `client_key_password`). Needs only the standard
library, the `cryptography` package and the `openssl` command (for the CA's subject hash).

Names (each certificate `X` also has `X.key`):
  ca                          root CA, self-signed, CA:TRUE
  ca.hashed                   directory holding ca.pem as `<subject hash>.0` (CAPATH layout)
  leaf                        localhost + 127.0.0.1 + a.test + *.a.test (the cookie tests' hosts), signed
                              by ca; leaf.chain is the leaf alone
  intermediate                CA:TRUE (pathlen 0), signed by ca
  leaf_via_intermediate       localhost + 127.0.0.1, signed by intermediate;
                              leaf_via_intermediate.chain is leaf + intermediate (what a server sends)
  self_signed                 localhost + 127.0.0.1, its own issuer
  expired                     localhost + 127.0.0.1, signed by ca, notAfter yesterday
  not_yet_valid               localhost + 127.0.0.1, signed by ca, notBefore tomorrow
  wrong_host                  other.example only, signed by ca
  client                      clientAuth, CN curlew-test-client, signed by ca; client.key.encrypted
  other_ca                    a second, unrelated root CA
  client_untrusted            clientAuth, CN curlew-untrusted-client, signed by other_ca
  ca_p384                     root CA with a P-384 key, signing with ECDSA-SHA384
  leaf_p384                   localhost + 127.0.0.1, P-384 key, signed by ca_p384: a full handshake
                              costs about 1.5 ms more than with the P-256 ones (three P-384 operations),
                              which a resumed handshake skips
"""

import base64
import datetime
import hashlib
import ipaddress
import json
import os
import subprocess
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLIENT_KEY_PASSWORD = "curlew-client-key-password"
SERVER_NAMES = ["localhost", "127.0.0.1"]
# The cookie tests reach loopback as `a.test` and `b.a.test` (host overrides), over https too.
LEAF_NAMES = SERVER_NAMES + ["a.test", "*.a.test"]


class Issued:
    """A certificate and its private key."""

    def __init__(self, certificate, key):
        self.certificate = certificate
        self.key = key


def new_key(curve=None):
    return ec.generate_private_key(curve or ec.SECP256R1())


def name(common_name):
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Curlew Tests"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def subject_alternative_names(names):
    entries = []
    for entry in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(entry)))
        except ValueError:
            entries.append(x509.DNSName(entry))
    return x509.SubjectAlternativeName(entries)


def make_certificate(
    common_name,
    issuer=None,
    is_ca=False,
    path_length=None,
    names=None,
    usage=None,
    not_before=None,
    not_after=None,
    key_usage=True,
    curve=None,
):
    """Issues a certificate; `issuer` None means self-signed. `usage` is an ExtendedKeyUsage OID.
    `curve` is the new key's curve (P-256 by default); a P-384 signer signs with SHA-384."""
    now = datetime.datetime.now(datetime.timezone.utc)
    key = new_key(curve)
    subject = name(common_name)
    signer_name = issuer.certificate.subject if issuer else subject
    signer_key = issuer.key if issuer else key
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(signer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or now - datetime.timedelta(hours=1))
        .not_valid_after(not_after or now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=path_length), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if issuer:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key()), critical=False
        )
    if key_usage:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=not is_ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=is_ca,
                crl_sign=is_ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if names:
        builder = builder.add_extension(subject_alternative_names(names), critical=False)
    digest = hashes.SHA384() if signer_key.curve.key_size >= 384 else hashes.SHA256()
    return Issued(builder.sign(signer_key, digest), key)


def pem(certificate):
    return certificate.public_bytes(serialization.Encoding.PEM)


def key_pem(key, password=None):
    encryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def pin(certificate):
    """libcurl's CURLOPT_PINNEDPUBLICKEY form: sha256// + base64(SHA-256(DER SubjectPublicKeyInfo))."""
    spki = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256//" + base64.b64encode(hashlib.sha256(spki).digest()).decode()


def subject_hash(path):
    """The OpenSSL subject hash (`openssl x509 -hash`), the file name CAPATH lookups use."""
    result = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", path], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def generate(directory):
    os.makedirs(directory, exist_ok=True)
    directory = os.path.abspath(directory)
    now = datetime.datetime.now(datetime.timezone.utc)
    server_auth = ExtendedKeyUsageOID.SERVER_AUTH
    client_auth = ExtendedKeyUsageOID.CLIENT_AUTH

    ca = make_certificate("Curlew Test Root CA", is_ca=True)
    intermediate = make_certificate("Curlew Test Intermediate CA", issuer=ca, is_ca=True, path_length=0)
    other_ca = make_certificate("Curlew Unrelated Root CA", is_ca=True)
    ca_p384 = make_certificate("Curlew Test P-384 Root CA", is_ca=True, curve=ec.SECP384R1())
    certificates = {
        "ca": ca,
        "intermediate": intermediate,
        "other_ca": other_ca,
        "leaf": make_certificate("localhost", issuer=ca, names=LEAF_NAMES, usage=server_auth),
        "leaf_via_intermediate": make_certificate(
            "localhost", issuer=intermediate, names=SERVER_NAMES, usage=server_auth
        ),
        # No keyUsage: with one lacking keyCertSign, OpenSSL would not treat the certificate as
        # self-signed and would report an unknown issuer (20) instead of a self-signed leaf (18).
        "self_signed": make_certificate("localhost", names=SERVER_NAMES, usage=server_auth, key_usage=False),
        "expired": make_certificate(
            "localhost",
            issuer=ca,
            names=SERVER_NAMES,
            usage=server_auth,
            not_before=now - datetime.timedelta(days=30),
            not_after=now - datetime.timedelta(days=1),
        ),
        "not_yet_valid": make_certificate(
            "localhost",
            issuer=ca,
            names=SERVER_NAMES,
            usage=server_auth,
            not_before=now + datetime.timedelta(days=1),
            not_after=now + datetime.timedelta(days=30),
        ),
        "wrong_host": make_certificate("other.example", issuer=ca, names=["other.example"], usage=server_auth),
        "client": make_certificate("curlew-test-client", issuer=ca, usage=client_auth),
        "client_untrusted": make_certificate("curlew-untrusted-client", issuer=other_ca, usage=client_auth),
        "ca_p384": ca_p384,
        "leaf_p384": make_certificate(
            "localhost", issuer=ca_p384, names=SERVER_NAMES, usage=server_auth, curve=ec.SECP384R1()
        ),
    }

    files = {}

    def write(file_name, data, key):
        path = os.path.join(directory, file_name)
        with open(path, "wb") as handle:
            handle.write(data)
        files[key] = path
        return path

    for label, issued in certificates.items():
        write(label + ".pem", pem(issued.certificate), label)
        write(label + ".key", key_pem(issued.key), label + ".key")
    write("leaf.chain.pem", pem(certificates["leaf"].certificate), "leaf.chain")
    write(
        "leaf_via_intermediate.chain.pem",
        pem(certificates["leaf_via_intermediate"].certificate) + pem(intermediate.certificate),
        "leaf_via_intermediate.chain",
    )
    write("client.key.encrypted", key_pem(certificates["client"].key, CLIENT_KEY_PASSWORD), "client.key.encrypted")

    ca_hash = subject_hash(files["ca"])
    hashed = os.path.join(directory, "ca.hashed")
    os.makedirs(hashed, exist_ok=True)
    with open(os.path.join(hashed, ca_hash + ".0"), "wb") as handle:
        handle.write(pem(ca.certificate))
    files["ca.hashed"] = hashed

    return {
        "directory": directory,
        "files": files,
        "pins": {label: pin(issued.certificate) for label, issued in certificates.items()},
        "client_key_password": CLIENT_KEY_PASSWORD,
        "ca_subject_hash": ca_hash,
    }


def main():
    if len(sys.argv) != 2:
        print("usage: tls_fixtures.py DIRECTORY", file=sys.stderr)
        return 2
    json.dump(generate(sys.argv[1]), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
