//! A server that cannot be started for want of file descriptors is a typed error that names
//! the process's limit (`RLIMIT_NOFILE`, soft and hard) and the server, on every runtime.
//!
//! The test lowers its own process's soft limit (the limit is the whole process's), so it is a
//! test program of its own holding this one test.
#![cfg(unix)]
// `rlim_t` is `u64` on Linux and macOS, not on every Unix.
#![allow(clippy::unnecessary_cast)]

mod common;
#[allow(unused_macros)]
mod runtimes;

use mcpwire::{ConnectOptions, Error};

use common::demo;
use runtimes::{Kind, Rt};

fn nofile() -> libc::rlimit {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes one `rlimit` through a pointer to a live one.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    limit
}

fn set_nofile(limit: libc::rlimit) {
    // SAFETY: `setrlimit` reads one `rlimit` through a pointer to a live one.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
}

#[test]
fn running_out_of_file_descriptors_names_the_limit_and_the_server() {
    for kind in [Kind::Smol, Kind::TokioMultiThread, Kind::TokioCurrentThread] {
        let rt = Rt::new(kind);
        let before = nofile();
        let open = std::fs::read_dir("/dev/fd").unwrap().count() as u64;
        let lowered = open + 40;
        assert!(lowered < before.rlim_cur as u64, "the limit is already low");
        set_nofile(libc::rlimit {
            rlim_cur: lowered as libc::rlim_t,
            rlim_max: before.rlim_max,
        });
        // Servers are started (their drivers held, not run) until one cannot be.
        let mut held = Vec::new();
        let err = loop {
            match rt.connect_with_driver(&demo(), ConnectOptions::default()) {
                Ok(pair) => held.push(pair),
                Err(e) => break e,
            }
            assert!(
                held.len() < 40,
                "{kind:?}: 40 servers started under a limit of {lowered}"
            );
        };
        set_nofile(before);
        let started = held.len();
        drop(held);
        assert!(
            started >= 3,
            "{kind:?}: only {started} servers started: {err}"
        );
        let Error::FileLimit {
            command,
            soft,
            hard,
            whole_system,
        } = &err
        else {
            panic!("{kind:?}: {err:?}")
        };
        assert_eq!(*soft, lowered, "{kind:?}");
        assert_eq!(*hard, before.rlim_max as u64, "{kind:?}");
        assert!(!whole_system, "{kind:?}");
        assert!(command.contains("mcpwire-demo-server"), "{command}");
        let text = err.to_string();
        assert!(text.contains(&format!("soft {lowered}")), "{text}");
        assert!(text.contains("mcpwire-demo-server"), "{text}");
        assert!(text.contains("RLIMIT_NOFILE"), "{text}");
    }
}
