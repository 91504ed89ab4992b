"""authd serving HTTPS itself (http.tls) and on a Unix socket (http.unix_socket), for devices on a
local network with no proxy in front: a throwaway CA made here, Python's ssl and curl as clients,
HTTP/2 by ALPN, a certificate swapped on SIGHUP while an old connection keeps working."""
import datetime
import http.client
import ipaddress
import json
import os
import signal
import socket
import ssl
import stat
import subprocess
import tempfile
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import running_server

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")


def make_ca(folder):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "authd test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    path = os.path.join(folder, "ca.pem")
    with open(path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    return key, cert, path


def issue(ca_key, ca_cert, folder, common_name):
    """A server certificate for 127.0.0.1 and localhost, written to cert.pem and key.pem; its serial."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    with open(os.path.join(folder, "key.pem.new"), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with open(os.path.join(folder, "cert.pem.new"), "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    os.replace(os.path.join(folder, "key.pem.new"), os.path.join(folder, "key.pem"))
    os.replace(os.path.join(folder, "cert.pem.new"), os.path.join(folder, "cert.pem"))
    return cert.serial_number


def peer_common_name(context, port):
    with socket.create_connection(("127.0.0.1", port)) as raw, context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        subject = dict(x[0] for x in tls.getpeercert()["subject"])
        return subject["commonName"], tls.selected_alpn_protocol(), tls.version()


def test_https_with_http2_and_a_certificate_renewed_on_sighup():
    with tempfile.TemporaryDirectory() as pki:
        ca_key, ca_cert, ca_path = make_ca(pki)
        issue(ca_key, ca_cert, pki, "first")
        tls = {"cert_file": os.path.join(pki, "cert.pem"), "key_file": os.path.join(pki, "key.pem")}
        with running_server({"issuer": None, "http": {"tls": tls}} ) as server:
            assert server.url.startswith("https://127.0.0.1:"), server.url
            port = int(server.url.rsplit(":", 1)[1])
            context = ssl.create_default_context(cafile=ca_path)
            context.set_alpn_protocols(["h2", "http/1.1"])
            assert peer_common_name(context, port) == ("first", "h2", "TLSv1.3")

            # curl speaks HTTP/2 to it, trusting the CA as a device on the LAN would.
            out = subprocess.run(["curl", "-s", "--cacert", ca_path, "-w", " %{http_version}", server.url + "/health"],
                                 capture_output=True, text=True, check=True).stdout
            assert out == '{"status":"ok"} 2', out
            me = subprocess.run(["curl", "-s", "--cacert", ca_path, "-o", "/dev/null", "-w", "%{http_code}", server.url + "/api/v1/auth/me"],
                                capture_output=True, text=True, check=True).stdout
            assert me == "401"
            # Plain HTTP and TLS 1.1 are refused.
            assert subprocess.run(["curl", "-s", "-o", "/dev/null", server.url.replace("https", "http") + "/health"]).returncode != 0
            old = ssl.create_default_context(cafile=ca_path)
            old.maximum_version = ssl.TLSVersion.TLSv1_1
            old.minimum_version = ssl.TLSVersion.TLSv1
            try:
                peer_common_name(old, port)
                raise AssertionError("a TLS 1.1 handshake succeeded")
            except (ssl.SSLError, ConnectionResetError):
                pass

            # A keep-alive connection made before the swap keeps working after it.
            kept = http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=ca_path))
            kept.request("GET", "/health")
            assert kept.getresponse().read() == b'{"status":"ok"}'
            issue(ca_key, ca_cert, pki, "second")
            server.proc.send_signal(signal.SIGHUP)
            deadline = time.time() + 60  # generous for a loaded machine; it goes on as soon as it happens
            while peer_common_name(context, port)[0] != "second":
                assert time.time() < deadline, "the new certificate was not served after SIGHUP"
                time.sleep(0.1)
            kept.request("GET", "/health")
            assert kept.getresponse().read() == b'{"status":"ok"}'
            kept.close()

            # A broken file on SIGHUP leaves the working certificate in place.
            with open(tls["cert_file"], "w") as f:
                f.write("not a certificate")
            server.proc.send_signal(signal.SIGHUP)
            time.sleep(0.5)
            assert peer_common_name(context, port)[0] == "second"
            assert server.proc.poll() is None


def test_a_unix_socket_beside_or_instead_of_tcp():
    with tempfile.TemporaryDirectory() as sockets:
        path = os.path.join(sockets, "authd.sock")
        with running_server({"http": {"unix_socket": path}}) as server:
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o660 and stat.S_ISSOCK(os.stat(path).st_mode)
            out = subprocess.run(["curl", "-s", "--unix-socket", path, "http://localhost/health"], capture_output=True, text=True, check=True).stdout
            assert out == '{"status":"ok"}'
            session = server.sign_in("local@example.com")
            me = subprocess.run(["curl", "-s", "--unix-socket", path, "-H", "Authorization: Bearer " + session["access_token"],
                                 "http://localhost/api/v1/auth/me"], capture_output=True, text=True, check=True).stdout
            assert json.loads(me)["email"] == "local@example.com"
            assert server.call("GET", "/health")[0] == 200, "TCP still serves"

        # Only the socket; a stale socket file (its server gone without removing it) is replaced.
        stale = socket.socket(socket.AF_UNIX)
        stale.bind(path)
        stale.close()
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "authd.json"), "w") as f:
                json.dump({"mail": {"transport": "outbox"}, "http": {"unix_socket": path, "tcp": False}}, f)
            proc = subprocess.Popen([BINARY, "serve", "--data", folder, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                line = proc.stdout.readline()
                assert line.strip().endswith("authd listening on unix:" + path), line + proc.stderr.read()
                out = subprocess.run(["curl", "-s", "--unix-socket", path, "http://localhost/health"], capture_output=True, text=True, check=True).stdout
                assert out == '{"status":"ok"}'
            finally:
                proc.send_signal(signal.SIGTERM)
                assert proc.wait(timeout=30) == 0
