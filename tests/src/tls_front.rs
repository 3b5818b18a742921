//! A TLS front for a plain HTTP test server: `https://127.0.0.1:<port>/mcp` in front of any
//! server of this crate (the fault server, most of all), so that a scripted misbehaviour runs
//! over TLS as it does in clear. Each connection is its own thread: the TLS handshake (rustls,
//! with a throwaway certificate for `localhost` and `127.0.0.1`; clients accept it with
//! `danger_accept_invalid_certificates`), then bytes both ways as they come. The server's end
//! becomes a TLS close (an orderly end), or with [`TlsFront::without_close_notify`] the TCP
//! end alone, as many servers close; its reset a reset; the client's end, the server's.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// How long each side is waited on before the other is looked at.
const POLL: Duration = Duration::from_millis(2);

/// A TLS front; it stops with the process.
pub struct TlsFront {
    addr: SocketAddr,
}

impl TlsFront {
    /// A front for the plain server at `upstream`.
    pub fn start(upstream: SocketAddr) -> TlsFront {
        Self::serve(upstream, true)
    }

    /// A front for the plain server at `upstream` that ends a connection the server ended
    /// with the TCP end alone, no TLS `close_notify` before it (a server that closes its socket
    /// right after its answer).
    pub fn without_close_notify(upstream: SocketAddr) -> TlsFront {
        Self::serve(upstream, false)
    }

    fn serve(upstream: SocketAddr, close_notify: bool) -> TlsFront {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let config = config();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let config = config.clone();
                std::thread::spawn(move || {
                    let _ = relay(client, upstream, config, close_notify);
                });
            }
        });
        TlsFront { addr }
    }

    /// The MCP endpoint: `https://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("https://{}/mcp", self.addr)
    }
}

fn config() -> Arc<ServerConfig> {
    let pem = include_bytes!("../../adapters/src/http/native/testdata/server.pem");
    let key = include_bytes!("../../adapters/src/http/native/testdata/server-key.pem");
    let cert = CertificateDer::from_pem_slice(pem).expect("a certificate");
    let key = PrivateKeyDer::from_pem_slice(key).expect("a key");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("a usable certificate");
    Arc::new(config)
}

/// Whether an IO error only says nothing came within the poll.
fn idle(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    config: Arc<ServerConfig>,
    close_notify: bool,
) -> io::Result<()> {
    let mut tls = StreamOwned::new(
        ServerConnection::new(config).map_err(io::Error::other)?,
        client,
    );
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    let mut server = TcpStream::connect(upstream)?;
    tls.sock.set_read_timeout(Some(POLL))?;
    server.set_read_timeout(Some(POLL))?;
    let (mut from_client, mut from_server) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let (mut client_done, mut server_done) = (false, false);
    while !(client_done && server_done) {
        if !client_done {
            match tls.read(&mut from_client) {
                Ok(0) => {
                    client_done = true;
                    let _ = server.shutdown(Shutdown::Write);
                }
                Ok(n) => server.write_all(&from_client[..n])?,
                Err(e) if idle(&e) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    client_done = true;
                    let _ = server.shutdown(Shutdown::Write);
                }
                Err(_) => break,
            }
        }
        if !server_done {
            // What the server wrote together goes out together, its end included: the bytes
            // it has written until it pauses (or a bound), then its end if it came.
            let mut pending = 0;
            let mut reset = false;
            while pending < from_server.len() {
                match server.read(&mut from_server[pending..]) {
                    Ok(0) => {
                        server_done = true;
                        break;
                    }
                    Ok(n) => pending += n,
                    Err(e) if idle(&e) => break,
                    // The server reset the connection: so does the front.
                    Err(_) => {
                        reset = true;
                        break;
                    }
                }
            }
            if pending > 0 {
                tls.write_all(&from_server[..pending])?;
                tls.flush()?;
            }
            if reset {
                break;
            }
            if server_done {
                if close_notify {
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                }
                let _ = tls.sock.shutdown(Shutdown::Write);
            }
        }
    }
    let _ = tls.sock.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
    Ok(())
}
