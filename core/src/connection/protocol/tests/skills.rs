//! `skills/list` and `skills/get` against the demo server, in both eras: the calls read no
//! skill file, need the server's declaration of the extension, and (with the `skills` feature)
//! the files read afterwards verify against the entry.

use serde_json::json;

use crate::connection::protocol::vocabulary::calls::{offered, McpCall};
use crate::connection::protocol::{CallOptions, ClientError};
use crate::jsonrpc::{Id, Message, RawJson};
use crate::server::DemoConfig;
use crate::skills::{GetSkillResult, ListSkillsResult, SKILLS_EXTENSION};

use crate::test_support::*;

const URI: &str = "skill://demo-guide/SKILL.md";

/// A pair ready in the handshake era, and one ready in the stateless era.
fn both_eras() -> [Pair; 2] {
    let legacy = Pair::ready();
    let mut modern = Pair::with_config(
        crate::ClientConfig {
            capabilities: caps_all(),
            ..crate::ClientConfig::default()
        },
        DemoConfig::default(),
    );
    modern.drive();
    assert!(modern.client.is_ready());
    [legacy, modern]
}

#[test]
fn listing_and_getting_read_no_file_in_either_era() {
    for mut p in both_eras() {
        p.wire.clear();
        let now = p.now;
        let c = p
            .client
            .call(now, &McpCall::list_skills(), CallOptions::default());
        let listed: ListSkillsResult = p.finish(c.unwrap()).unwrap().parse().unwrap();
        assert_eq!(listed.skills.len(), 1);
        let skill = &listed.skills[0];
        assert_eq!(
            (skill.uri.as_str(), skill.name()),
            (URI, Some("demo-guide"))
        );
        assert_eq!(skill.files().map(<[_]>::len), Some(2));
        assert_eq!(listed.extra["ttlMs"], json!(60_000));
        let get = McpCall::get_skill(URI);
        let c = p.client.call(now, &get, CallOptions::default()).unwrap();
        let got: GetSkillResult = p.finish(c).unwrap().parse().unwrap();
        assert_eq!(&got.skill, skill);
        let unknown = McpCall::get_skill("skill://nothing/SKILL.md");
        let c = p
            .client
            .call(now, &unknown, CallOptions::default())
            .unwrap();
        let refused = p.finish(c).unwrap_err();
        assert!(
            matches!(&refused, crate::CallError::Server(e) if e.code == -32602),
            "{refused:?}"
        );
        // Only the skills calls went: no resources/read ahead of need.
        let requests: Vec<&String> = p.wire.iter().filter(|w| w.starts_with("C→S")).collect();
        assert_eq!(requests.len(), 3, "{:?}", p.wire);
        assert!(
            requests.iter().all(|w| w.contains("skills/")),
            "{:?}",
            p.wire
        );
    }
}

#[test]
fn a_server_without_the_extension_is_not_asked() {
    // The server is played by hand.
    let mut c = Pair::with_config(legacy(), DemoConfig::default());
    let now = c.now;
    while c.poll_written().is_some() {}
    let answer = json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"},
                        "capabilities": {"resources": {}, "extensions": {"other/ext": {}}}});
    c.feed(&Message::result(Id::Num(0), RawJson::new(&answer).unwrap()));
    while c.poll_written().is_some() {}
    assert!(c.client.is_ready());
    for call in [McpCall::list_skills(), McpCall::get_skill(URI)] {
        let refused = c
            .client
            .call(now, &call, CallOptions::default())
            .unwrap_err();
        assert_eq!(refused, ClientError::NotSupported(SKILLS_EXTENSION));
    }
    assert!(c.poll_written().is_none());
    // The declaration must be an object under `extensions`.
    let mut caps = c.client.server().unwrap().capabilities.clone();
    caps.extra
        .insert("extensions".into(), json!({ SKILLS_EXTENSION: true }));
    assert!(!offered(&caps, SKILLS_EXTENSION));
    caps.extra
        .insert("extensions".into(), json!({ SKILLS_EXTENSION: {} }));
    assert!(offered(&caps, SKILLS_EXTENSION));
}

#[cfg(feature = "skills")]
#[test]
fn the_demo_skill_read_when_asked_verifies_in_both_eras() {
    use crate::skills::{verify_file, verify_skill_md};
    use crate::types::ReadResourceResult;
    for mut p in both_eras() {
        let now = p.now;
        let c = p
            .client
            .call(now, &McpCall::list_skills(), CallOptions::default());
        let listed: ListSkillsResult = p.finish(c.unwrap()).unwrap().parse().unwrap();
        let skill = &listed.skills[0];
        let mut read = |uri: &str| -> ReadResourceResult {
            let c = p
                .client
                .call(now, &McpCall::read_resource(uri), CallOptions::default());
            p.finish(c.unwrap()).unwrap().parse().unwrap()
        };
        let md = verify_skill_md(skill, &read(URI)).unwrap();
        assert!(md.text().unwrap().starts_with("---\nname: demo-guide\n"));
        let tools = &skill.files().unwrap()[1].uri;
        let file = verify_file(skill, tools, &read(tools)).unwrap();
        assert_eq!(file.path_in(skill), "references/TOOLS.md");
    }
}
