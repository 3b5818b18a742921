//! The command line raises its own soft `RLIMIT_NOFILE` to the hard limit at start (Unix): a
//! configuration of many servers needs many descriptors. Seen from a server it starts, which
//! inherits the limit and writes its soft value to a file.
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::process::Command;

#[test]
fn the_soft_limit_of_open_files_is_raised_to_the_hard_one() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes one `rlimit` through a pointer to a live one.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    assert!(limit.rlim_max > 256, "the hard limit is too low to lower");
    let lowered = libc::rlimit {
        rlim_cur: 256,
        rlim_max: limit.rlim_max,
    };
    let dir = std::env::temp_dir().join(format!("mcpwire-fd-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seen = dir.join("soft");
    let bin = env!("CARGO_BIN_EXE_mcpwire");
    let line = format!(
        "sh -c 'ulimit -Sn > \"{}\"; exec \"{bin}\" serve-demo'",
        seen.display()
    );
    let mut cmd = Command::new(bin);
    cmd.args(["--stdio", &line, "call", "echo", "message=hi"]);
    // SAFETY: only `setrlimit`, async-signal-safe, runs between fork and exec; `lowered` is a
    // copy owned by the closure.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lowered) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let text = std::fs::read_to_string(&seen);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hi\n");
    let expected = if limit.rlim_max == libc::RLIM_INFINITY {
        "unlimited".to_owned()
    } else {
        limit.rlim_max.to_string()
    };
    assert_eq!(text.unwrap().trim(), expected);
}
