"""Writes the certificates of the TLS tests into a directory, all freshly generated (ECDSA P-256,
PEM, private keys unencrypted PKCS#8). Uses the pinned `cryptography` package.

Usage:
    python py_tls_certs.py DIR

Files written into DIR:
    ca.pem, ca-key.pem                      the test CA
    server.pem, server-key.pem              127.0.0.1 and localhost, signed by the test CA
    expired.pem, expired-key.pem            the same names, signed by the test CA, expired
    notyetvalid.pem, notyetvalid-key.pem    the same names, signed by the test CA, valid from
                                            next year on
    wrongname.pem, wrongname-key.pem        only wrong.example, signed by the test CA
    other-ca.pem, other-ca-key.pem          a second, unrelated CA
    unknown-issuer.pem, unknown-issuer-key.pem
                                            127.0.0.1 and localhost, signed by the other CA
    client-ca.pem, client-ca-key.pem        the CA that signs client certificates
    client.pem, client-key.pem              a client certificate signed by the client CA
    stranger.pem, stranger-key.pem          a client certificate signed by the other CA

Each server and client file holds the leaf only (the CAs are roots: nothing sits between).
"""

from __future__ import annotations

import datetime
import ipaddress
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOW = datetime.datetime.now(datetime.timezone.utc)
DAY = datetime.timedelta(days=1)
SERVER_NAMES = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]


def name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mcpwire tests"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def ca(common_name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    private = key()
    subject = name(common_name)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - DAY)
        .not_valid_after(NOW + 30 * DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(private.public_key()), critical=False)
        .sign(private, hashes.SHA256())
    )
    return cert, private


def leaf(
    common_name: str,
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
    *,
    names: list[x509.GeneralName] | None = None,
    client: bool = False,
    not_before: datetime.datetime = NOW - DAY,
    not_after: datetime.datetime = NOW + 30 * DAY,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    issuer_cert, issuer_key = issuer
    private = key()
    usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
    builder = (
        x509.CertificateBuilder()
        .subject_name(name(common_name))
        .issuer_name(issuer_cert.subject)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
        )
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256()), private


def write(directory: Path, stem: str, pair: tuple[x509.Certificate, ec.EllipticCurvePrivateKey]) -> None:
    cert, private = pair
    (directory / f"{stem}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / f"{stem}-key.pem").write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: py_tls_certs.py DIR")
    directory = Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)

    test_ca = ca("mcpwire test CA")
    other_ca = ca("mcpwire unrelated CA")
    client_ca = ca("mcpwire client CA")
    write(directory, "ca", test_ca)
    write(directory, "other-ca", other_ca)
    write(directory, "client-ca", client_ca)

    write(directory, "server", leaf("127.0.0.1", test_ca, names=SERVER_NAMES))
    write(
        directory,
        "expired",
        leaf("127.0.0.1", test_ca, names=SERVER_NAMES, not_before=NOW - 30 * DAY, not_after=NOW - 2 * DAY),
    )
    write(
        directory,
        "notyetvalid",
        leaf("127.0.0.1", test_ca, names=SERVER_NAMES, not_before=NOW + 365 * DAY, not_after=NOW + 400 * DAY),
    )
    write(directory, "wrongname", leaf("wrong.example", test_ca, names=[x509.DNSName("wrong.example")]))
    write(directory, "unknown-issuer", leaf("127.0.0.1", other_ca, names=SERVER_NAMES))
    write(directory, "client", leaf("mcpwire test client", client_ca, client=True))
    write(directory, "stranger", leaf("mcpwire stranger", other_ca, client=True))


if __name__ == "__main__":
    main()
