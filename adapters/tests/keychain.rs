//! `KeychainTokenStore` (the `keychain` feature): its logic against a keychain kept in memory
//! (keyring's own mock keeps nothing between entries, so a map stands in for the OS), and the
//! probe where there is no keychain: a private session bus with no Secret Service on it, and
//! no session bus at all (each in a child process, since the bus comes from the environment).

#![cfg(feature = "keychain")]

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use keyring::credential::{Credential, CredentialApi, CredentialBuilderApi};
use mcpwire::oauth::{Credentials, KeychainTokenStore, KnownClient, TokenStore, Url};
use serde_json::json;

/// What the stand-in keychain holds: (service, account) → secret.
type Vault = Arc<Mutex<HashMap<(String, String), Vec<u8>>>>;

/// The stand-in keychain, made the default for every entry of this test process (once),
/// emptied, and this test's alone while the guard lives (the tests count its entries).
fn vault() -> (MutexGuard<'static, ()>, Vault) {
    static VAULT: OnceLock<Vault> = OnceLock::new();
    static ONE_TEST: Mutex<()> = Mutex::new(());
    let guard = ONE_TEST.lock().unwrap_or_else(|e| e.into_inner());
    let vault = VAULT
        .get_or_init(|| {
            let vault = Vault::default();
            keyring::set_default_credential_builder(Box::new(MapBuilder(vault.clone())));
            vault
        })
        .clone();
    vault.lock().unwrap().clear();
    (guard, vault)
}

struct MapBuilder(Vault);

impl CredentialBuilderApi for MapBuilder {
    fn build(
        &self,
        _target: Option<&str>,
        service: &str,
        user: &str,
    ) -> keyring::Result<Box<Credential>> {
        Ok(Box::new(MapEntry {
            vault: self.0.clone(),
            key: (service.to_owned(), user.to_owned()),
        }))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

struct MapEntry {
    vault: Vault,
    key: (String, String),
}

impl std::fmt::Debug for MapEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MapEntry({:?})", self.key)
    }
}

impl CredentialApi for MapEntry {
    fn set_secret(&self, secret: &[u8]) -> keyring::Result<()> {
        self.vault
            .lock()
            .unwrap()
            .insert(self.key.clone(), secret.to_vec());
        Ok(())
    }

    fn get_secret(&self) -> keyring::Result<Vec<u8>> {
        let vault = self.vault.lock().unwrap();
        vault.get(&self.key).cloned().ok_or(keyring::Error::NoEntry)
    }

    fn delete_credential(&self) -> keyring::Result<()> {
        let mut vault = self.vault.lock().unwrap();
        vault
            .remove(&self.key)
            .map(|_| ())
            .ok_or(keyring::Error::NoEntry)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!(
            "mcpwire-keychain-test-{}-{name}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const ACCESS: &str = "access-token-S3CRET";
const REFRESH: &str = "refresh-token-S3CRET";
const CLIENT_SECRET: &str = "client-secret-S3CRET";

fn credentials(issuer: &str, access: &str) -> Credentials {
    let tokens = serde_json::from_value(json!({"access_token": access, "token_type": "Bearer",
        "expires_at": 4_000_000_000u64, "refresh_token": REFRESH, "scopes": ["read"],
        "id_token": null, "issued_token_type": null}))
    .unwrap();
    Credentials {
        tokens,
        client_auth: serde_json::from_value(
            json!({"method": "secret_basic", "client_id": "c", "secret": CLIENT_SECRET}),
        )
        .unwrap(),
        registration: None,
        issuer: issuer.into(),
        resource: None,
        token_endpoint: Url::parse(&format!("{issuer}/token")).unwrap(),
        requested_scopes: vec!["read".into()],
        authorizations: 1,
    }
}

/// The stand-in keychain's accounts under the store's service.
fn accounts(vault: &Vault) -> Vec<String> {
    let mut all: Vec<String> = vault
        .lock()
        .unwrap()
        .keys()
        .filter(|(s, _)| s == KeychainTokenStore::SERVICE)
        .map(|(_, a)| a.clone())
        .collect();
    all.sort();
    all
}

/// Every file under `dir`, read.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let text = std::fs::read_to_string(&p).unwrap();
                all.push((p, text));
            }
        }
    }
    all
}

#[test]
fn round_trip_two_issuers_clients_list_and_remove_with_no_secret_in_the_index() {
    let (_one, vault) = vault();
    let tmp = TempDir::new("round-trip");
    let store = KeychainTokenStore::open_in(&tmp.0).expect("the stand-in keychain answers");
    let server = "https://mcp.example.com/round-trip";
    let (as1, as2) = ("https://as1.example.com", "https://as2.example.com");
    smol::block_on(async {
        assert_eq!(store.load(server).await.unwrap(), None);
        store
            .save(server, credentials(as1, &format!("{ACCESS}-1")))
            .await
            .unwrap();
        store
            .save(server, credentials(as2, &format!("{ACCESS}-2")))
            .await
            .unwrap();
        // The latest saved is the one loaded.
        let loaded = store.load(server).await.unwrap().expect("kept");
        assert_eq!(loaded, credentials(as2, &format!("{ACCESS}-2")));
        // Saving the first issuer's again makes it the latest; nothing else is lost.
        store
            .save(server, credentials(as1, &format!("{ACCESS}-1b")))
            .await
            .unwrap();
        let loaded = store.load(server).await.unwrap().expect("kept");
        assert_eq!(loaded, credentials(as1, &format!("{ACCESS}-1b")));

        let client = KnownClient::of(&credentials(as1, ACCESS));
        store.save_client(client.clone()).await.unwrap();
        store.save_client(client.clone()).await.unwrap();
        let other = KnownClient::of(&credentials(as2, ACCESS));
        store.save_client(other.clone()).await.unwrap();
        let mut clients = store.clients().await.unwrap();
        clients.sort_by(|a, b| a.issuer.cmp(&b.issuer));
        assert_eq!(clients, vec![client, other]);
    });

    // `auth list` from the index alone: one sign-in per issuer.
    let list = store.sign_ins().unwrap();
    assert_eq!(list.len(), 2, "{list:?}");
    assert_eq!(
        (list[0].issuer.as_str(), list[1].issuer.as_str()),
        (as1, as2)
    );
    assert!(list.iter().all(|s| s.server == server
        && s.refreshable
        && s.scopes == ["read"]
        && s.expires_at == Some(4_000_000_000)
        && s.saved_at > 1_600_000_000));

    // The secrets are in the keychain, under the service; none is in the index or a name.
    let names = accounts(&vault);
    let secret_bearing = vault.lock().unwrap().values().any(|v| {
        let v = String::from_utf8_lossy(v);
        v.contains(REFRESH) && v.contains(CLIENT_SECRET)
    });
    assert!(secret_bearing, "the credentials are in the keychain");
    let index = files_under(&tmp.0);
    assert_eq!(index.len(), 4, "two sign-ins and two clients: {index:?}");
    for (path, text) in &index {
        for secret in [ACCESS, REFRESH, CLIENT_SECRET, "client_id"] {
            assert!(!text.contains(secret), "{secret} in {}", path.display());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", path.display());
        }
    }
    for name in &names {
        assert!(
            !name.contains("example.com"),
            "a URL in an entry's name: {name}"
        );
    }
    // No secret in the store's Debug either.
    let debug = format!("{store:?}");
    assert!(!debug.contains("S3CRET"), "{debug}");

    // Removing forgets both issuers' tokens (keychain and index), not the clients.
    smol::block_on(async {
        store.remove(server).await.unwrap();
        assert_eq!(store.load(server).await.unwrap(), None);
        assert_eq!(store.clients().await.unwrap().len(), 2);
    });
    assert!(store.sign_ins().unwrap().is_empty());
    let left = accounts(&vault);
    assert!(
        left.iter().all(|a| !names_of_tokens(&names).contains(a)),
        "token entries left: {left:?}"
    );
}

/// The token entries among `names`.
fn names_of_tokens(names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| n.starts_with("oauth-token-"))
        .cloned()
        .collect()
}

#[test]
fn a_long_record_is_split_and_its_extra_parts_go_when_it_shrinks() {
    let (_one, vault) = vault();
    let tmp = TempDir::new("long");
    let store = KeychainTokenStore::open_in(&tmp.0).unwrap();
    let server = "https://mcp.example.com/long";
    let issuer = "https://as-long.example.com";
    let long = "x".repeat(3 * KeychainTokenStore::PART);
    let parts_now = || {
        accounts(&vault)
            .into_iter()
            .filter(|a| a.starts_with("oauth-token-"))
            .count()
    };
    let before = parts_now();
    smol::block_on(async {
        store
            .save(server, credentials(issuer, &long))
            .await
            .unwrap();
        assert_eq!(parts_now() - before, 4, "{:?}", accounts(&vault));
        let loaded = store.load(server).await.unwrap().expect("kept whole");
        assert_eq!(loaded.tokens.access_token, long);

        store
            .save(server, credentials(issuer, ACCESS))
            .await
            .unwrap();
        assert_eq!(parts_now() - before, 1, "{:?}", accounts(&vault));
        let loaded = store.load(server).await.unwrap().expect("kept");
        assert_eq!(loaded.tokens.access_token, ACCESS);
        store.remove(server).await.unwrap();
        assert_eq!(parts_now(), before);
    });
}

#[test]
fn an_entry_gone_from_the_keychain_is_a_sign_in_absent() {
    let (_one, vault) = vault();
    let tmp = TempDir::new("gone");
    let store = KeychainTokenStore::open_in(&tmp.0).unwrap();
    let server = "https://mcp.example.com/gone";
    smol::block_on(async {
        store
            .save(server, credentials("https://as-gone.example.com", ACCESS))
            .await
            .unwrap();
    });
    // Removed by hand (the user's keychain app): only this test's entry is new.
    let listed = store.sign_ins().unwrap();
    assert_eq!(listed.len(), 1);
    {
        let mut v = vault.lock().unwrap();
        let mine: Vec<_> = v
            .iter()
            .filter(|(_, s)| String::from_utf8_lossy(s).contains("as-gone.example.com"))
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(mine.len(), 1);
        v.remove(&mine[0]);
    }
    smol::block_on(async {
        assert_eq!(store.load(server).await.unwrap(), None);
        // Signing out still clears the index.
        store.remove(server).await.unwrap();
    });
    assert!(store.sign_ins().unwrap().is_empty());
}

/// In a child process: prints the probe's outcome for the bus the environment names.
#[test]
#[ignore = "run by the probe tests in a child process"]
fn probe_child() {
    let Some(dir) = std::env::var_os("MCPWIRE_TEST_KEYCHAIN_DIR") else {
        return;
    };
    match KeychainTokenStore::open_in(PathBuf::from(dir)) {
        Ok(_) => println!("PROBE ok"),
        Err(e) => println!("PROBE error: {}", e.0),
    }
}

/// Runs [`probe_child`] with `bus` as the session bus (`None`: the variable unset, and no bus
/// in the runtime folder), returning its line.
fn probe_in_child(tmp: &Path, bus: Option<&str>) -> String {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--ignored", "--exact", "probe_child", "--nocapture"])
        .env("MCPWIRE_TEST_KEYCHAIN_DIR", tmp)
        .env("XDG_RUNTIME_DIR", tmp);
    match bus {
        Some(address) => command.env("DBUS_SESSION_BUS_ADDRESS", address),
        None => command.env_remove("DBUS_SESSION_BUS_ADDRESS"),
    };
    let out = command.output().expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout
        .lines()
        .find(|l| l.starts_with("PROBE "))
        .unwrap_or_else(|| panic!("no probe outcome: {stdout}"))
        .to_owned()
}

/// A private session bus that nothing owns a name on and that starts nothing: no Secret
/// Service. Killed (by its PID) when dropped.
struct PrivateBus {
    child: std::process::Child,
    address: String,
}

impl PrivateBus {
    fn start(dir: &Path) -> Option<PrivateBus> {
        let daemon = Path::new("/usr/bin/dbus-daemon");
        if !daemon.exists() {
            return None;
        }
        let config = dir.join("bus.conf");
        let address = format!("unix:path={}", dir.join("bus").display());
        // No <servicedir>: nothing is started on demand (a Secret Service installed on the
        // machine included).
        std::fs::write(
            &config,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
                 <busconfig><type>session</type><listen>{address}</listen><auth>EXTERNAL</auth>\
                 <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
                 <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n"
            ),
        )
        .unwrap();
        let mut child = std::process::Command::new(daemon)
            .arg(format!("--config-file={}", config.display()))
            .arg(format!("--address={address}"))
            .args(["--nofork", "--print-address"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dbus-daemon starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("unix:"), "dbus-daemon said {line:?}");
        Some(PrivateBus {
            child,
            address: line.trim().to_owned(),
        })
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(any(target_os = "linux", target_os = "freebsd"))]
#[test]
fn no_secret_service_on_the_bus_or_no_bus_fails_the_probe_saying_why() {
    let tmp = TempDir::new("probe");
    match PrivateBus::start(&tmp.0) {
        Some(bus) => {
            let line = probe_in_child(&tmp.0, Some(&bus.address));
            assert!(line.starts_with("PROBE error: no OS keychain ("), "{line}");
            assert!(line.contains("org.freedesktop.secrets"), "{line}");
        }
        None => eprintln!("no dbus-daemon: the private bus case is skipped"),
    }
    let line = probe_in_child(&tmp.0, None);
    assert!(line.starts_with("PROBE error: no OS keychain ("), "{line}");
    // Nothing was written where the index would be.
    assert!(!tmp.0.join("keychain").exists());
    for secret in [ACCESS, REFRESH] {
        assert!(!line.contains(secret));
    }
}

/// Against the machine's own keychain, by hand only (it writes there, then removes what it
/// wrote): `MCPWIRE_TEST_REAL_KEYCHAIN=1 cargo test -p mcpwire --features keychain --test
/// keychain -- --ignored --exact real_keychain_round_trip`.
#[test]
#[ignore = "uses the machine's own keychain; run by hand"]
fn real_keychain_round_trip() {
    if std::env::var_os("MCPWIRE_TEST_REAL_KEYCHAIN").is_none() {
        return;
    }
    let tmp = TempDir::new("real");
    let store = KeychainTokenStore::open_in(&tmp.0).expect("a keychain");
    let server = "https://mcp.example.com/real-keychain-test";
    let issuer = "https://as-real.example.com";
    let long = "y".repeat(2 * KeychainTokenStore::PART + 1);
    smol::block_on(async {
        store
            .save(server, credentials(issuer, &long))
            .await
            .unwrap();
        let client = KnownClient::of(&credentials(issuer, ACCESS));
        store.save_client(client.clone()).await.unwrap();
        let loaded = store.load(server).await.unwrap().expect("kept");
        assert_eq!(loaded, credentials(issuer, &long));
        assert!(store.clients().await.unwrap().contains(&client));
        store.remove(server).await.unwrap();
        assert_eq!(store.load(server).await.unwrap(), None);
    });
    for (path, text) in files_under(&tmp.0) {
        assert!(!text.contains("S3CRET"), "{}", path.display());
        // The client's entry too (a store forgets no client): named by its index file's key.
        if let Some(key) = path.file_stem().and_then(|k| k.to_str()) {
            if path.parent().is_some_and(|p| p.ends_with("clients")) {
                let account = format!("oauth-client-{key}");
                let entry = keyring::Entry::new(KeychainTokenStore::SERVICE, &account).unwrap();
                entry.delete_credential().unwrap();
            }
        }
    }
}
