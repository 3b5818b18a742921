//! Skills (SEP-2640) end to end against the built-in demo server, in both eras: the listing
//! reads no file, a skill loads with its `SKILL.md` alone, its other files are read when asked,
//! each verified, and what is not the skill's is refused before anything is read.

mod common;

use std::sync::{Arc, Mutex};

use mcpwire::core::skills::SkillError;
use mcpwire::{ConnectOptions, Direction, Era, Error};

const URI: &str = "skill://demo-guide/SKILL.md";
const TOOLS: &str = "skill://demo-guide/references/TOOLS.md";

/// A client of the demo server, and the methods of the requests it sends, as sent.
fn connect(era: Era) -> (mcpwire::Client, Arc<Mutex<Vec<String>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    let opts = ConnectOptions {
        era,
        ..ConnectOptions::default()
    }
    .observer(move |direction: Direction, bytes: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
        if let (Direction::Outgoing, Some(m)) = (direction, v["method"].as_str()) {
            let uri = v["params"]["uri"].as_str().unwrap_or("");
            log.lock()
                .unwrap()
                .push(format!("{m} {uri}").trim_end().to_owned());
        }
    });
    (
        smol::block_on(mcpwire::connect_smol(&common::demo(), opts)).unwrap(),
        sent,
    )
}

/// The requests sent since the last call, without the handshake's.
fn take(sent: &Mutex<Vec<String>>) -> Vec<String> {
    let mut all = std::mem::take(&mut *sent.lock().unwrap());
    all.retain(|m| {
        !m.starts_with("initialize")
            && !m.starts_with("notifications/")
            && !m.starts_with("server/discover")
    });
    all
}

#[test]
fn list_load_read_and_get_in_both_eras() {
    for era in [Era::Handshake, Era::Stateless] {
        let (client, sent) = connect(era);
        smol::block_on(async {
            take(&sent);
            let skills = client.list_skills().await.unwrap();
            assert_eq!(skills.len(), 1);
            assert_eq!(skills[0].name(), Some("demo-guide"));
            assert_eq!(
                take(&sent),
                ["skills/list"],
                "{era:?}: listing reads no file"
            );

            let entry = client.skill_entry(URI).await.unwrap();
            assert_eq!(entry, skills[0]);
            assert_eq!(take(&sent), [format!("skills/get {URI}")]);

            // Loading reads the SKILL.md alone; a supporting file is read when asked.
            let loaded = client.load_skill("demo-guide").await.unwrap();
            assert!(loaded
                .skill_md
                .text()
                .unwrap()
                .contains("# The demo server"));
            assert_eq!(
                take(&sent),
                ["skills/list".into(), format!("resources/read {URI}")]
            );
            let tools = client
                .read_skill_file(&loaded, "references/TOOLS.md")
                .await
                .unwrap();
            assert_eq!(tools.uri, TOOLS);
            assert_eq!(take(&sent), [format!("resources/read {TOOLS}")]);
            // A file the entry does not list is refused before anything is read.
            let e = client
                .read_skill_file(&loaded, "scripts/run.sh")
                .await
                .unwrap_err();
            let uri = "skill://demo-guide/scripts/run.sh".to_owned();
            assert_eq!(e, Error::Skill(SkillError::NotListed { uri }));
            assert!(take(&sent).is_empty());

            // Everything, by name, path or URI.
            for name in ["demo-guide", URI] {
                let skill = client.get_skill(name).await.unwrap();
                let paths: Vec<&str> = skill
                    .files
                    .iter()
                    .map(|f| f.path_in(&skill.entry))
                    .collect();
                assert_eq!(paths, ["SKILL.md", "references/TOOLS.md"]);
            }
            let e = client.get_skill("no-such-skill").await.unwrap_err();
            assert_eq!(e.to_string(), "no skill named `no-such-skill`");
            let e = client
                .get_skill("skill://no-such-skill/SKILL.md")
                .await
                .unwrap_err();
            assert_eq!(e.server_error().map(|e| e.code), Some(-32602), "{e}");
            client.close().await;
        });
    }
}
