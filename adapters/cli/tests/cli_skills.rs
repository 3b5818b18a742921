//! `mcpwire skills` end to end, in both eras: the demo server's skill listed (no file read) and
//! got (every file verified), and a server whose skill does not match its entry (digest, size,
//! frontmatter, a supporting file) rejected with exit 7, nothing of it printed, nothing more of
//! it read.

mod common;

use std::process::Output;

use serde_json::Value;

use common::{assert_contains, mcpwire, stderr, stdout, temp};

/// Runs `args` in each era (auto, which picks stateless against these servers, and handshake).
fn both_eras(args: &[&str]) -> [Output; 2] {
    ["auto", "handshake"].map(|era| {
        let mut all = vec!["--era", era];
        all.extend_from_slice(args);
        mcpwire(&all)
    })
}

fn fixture(mode: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/skills.py");
    format!("python3 {script} {mode}")
}

#[test]
fn the_demo_skill_is_listed_without_reading_a_file() {
    for o in both_eras(&["--verbose", "skills"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "NAME        URI                          FILES           DESCRIPTION",
                "demo-guide  skill://demo-guide/SKILL.md  2 files, 1 KiB  A short tour of the \
                 mcpwire demo server's tools, in the order to try them"
            ]
        );
        let frames = stderr(&o);
        assert_contains(&frames, "\"method\":\"skills/list\"");
        assert!(!frames.contains("resources/read"), "{frames}");
    }
    for o in both_eras(&["skills", "--json"]) {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v[0]["uri"], "skill://demo-guide/SKILL.md");
        assert_eq!(v[0]["resources"].as_array().map(Vec::len), Some(2));
    }
}

#[test]
fn the_demo_skill_is_got_with_every_file_verified() {
    for o in both_eras(&["skills", "demo-guide"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.starts_with("==> SKILL.md <==\n---\nname: demo-guide\n"),
            "{out}"
        );
        assert_contains(
            &out,
            "\n\n==> references/TOOLS.md <==\n# The demo server's tools\n",
        );
        assert_contains(
            &stderr(&o),
            "demo-guide: 2 files, 1 KiB, verified against the entry",
        );
    }
    for o in both_eras(&["skills", "skill://demo-guide/SKILL.md", "--json"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["verified"], true);
        assert_eq!(v["skill"]["frontmatter"]["name"], "demo-guide");
        assert_eq!(v["files"][1]["path"], "references/TOOLS.md");
        assert_eq!(v["files"][1]["size"], 442);
    }
    for o in both_eras(&["skills", "no-such-skill"]) {
        assert_eq!(o.status.code(), Some(2));
        assert_contains(
            &stderr(&o),
            "no skill named `no-such-skill`; see `mcpwire skills`",
        );
    }
}

#[test]
fn a_skill_that_does_not_match_its_entry_is_rejected() {
    let cases = [
        ("digest", "SKILL.md: digest sha256:", false),
        ("size", "SKILL.md: 109 bytes read, the entry says 97", false),
        (
            "frontmatter",
            "the frontmatter differs from the entry's: description (file: \"Exfiltrate \
             credentials\"; entry: \"Extract, fill, and assemble PDF documents\")",
            false,
        ),
        (
            "supporting",
            "references/FORMS.md: 29 bytes read, the entry says 20",
            true,
        ),
    ];
    let dir = temp("skills");
    for (mode, why, read_forms) in cases {
        for era in ["auto", "handshake"] {
            let log = dir.join(format!("{mode}-{era}.log"));
            let env = format!("SKILLS_LOG={}", log.display());
            let server = fixture(mode);
            let args = ["--era", era, "--env", &env, "--stdio", &server];
            let o = mcpwire(&[&args[..], &["skills", "pdf-processing"]].concat());
            assert_eq!(o.status.code(), Some(7), "{mode} {era}: {}", stderr(&o));
            assert_eq!(
                stdout(&o),
                "",
                "{mode} {era}: nothing of the skill is printed"
            );
            let e = stderr(&o);
            assert_contains(&e, "skill pdf-processing rejected, nothing of it is used: ");
            assert_contains(&e, why);
            // A SKILL.md that does not match ends the reading.
            let reads = std::fs::read_to_string(&log).unwrap();
            let mut expected = vec!["skill://pdf-processing/SKILL.md"];
            if read_forms {
                expected.push("skill://pdf-processing/references/FORMS.md");
            }
            assert_eq!(reads.lines().collect::<Vec<_>>(), expected, "{mode} {era}");
            // Listing reads nothing.
            std::fs::remove_file(&log).unwrap();
            let o = mcpwire(&[&args[..], &["skills"]].concat());
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            assert_contains(
                &stdout(&o),
                "pdf-processing  skill://pdf-processing/SKILL.md",
            );
            assert!(!log.exists(), "{mode} {era}: listing read a file");
        }
    }
    let o = mcpwire(&["--stdio", &fixture("good"), "skills", "pdf-processing"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "==> SKILL.md <==\n---\nname: pdf-processing\ndescription: Extract, fill, and assemble \
         PDF documents\n---\n\nSkill body.\n\n==> references/FORMS.md <==\nSupporting content.\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
