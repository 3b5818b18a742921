//! The demo server's skill (SEP-2640, the `io.modelcontextprotocol/skills` extension):
//! `demo-guide`, a `SKILL.md` and one supporting file, listed by `skills/list`, given by
//! `skills/get` and read with `resources/read`, the same in both eras.

use serde_json::{json, Value};

use crate::jsonrpc::{codes, ErrorObject};

/// The URI of the demo skill's `SKILL.md`.
pub const SKILL_URI: &str = "skill://demo-guide/SKILL.md";

/// The demo skill's files: URI, text, and the SHA-256 digest of the text (a test checks it).
const FILES: [(&str, &str, &str); 2] = [
    (
        SKILL_URI,
        include_str!("demo_skill/SKILL.md"),
        "sha256:cb6a3b549d49ea517fdcdec6242bbdd9d999d1486b609b543356fd2804a4d966",
    ),
    (
        "skill://demo-guide/references/TOOLS.md",
        include_str!("demo_skill/references/TOOLS.md"),
        "sha256:0b2de382f949196d63c7c44f1af3cf059018909c3ec266ec7fc412a378dbc53a",
    ),
];

/// The demo skill's entry, its frontmatter as its `SKILL.md` has it.
fn entry() -> Value {
    let resources: Vec<Value> = FILES
        .iter()
        .map(|(uri, text, digest)| json!({"uri": uri, "digest": digest, "size": text.len()}))
        .collect();
    json!({
        "uri": SKILL_URI,
        "frontmatter": {
            "name": "demo-guide",
            "description": "A short tour of the mcpwire demo server's tools, in the order to try them",
            "license": "Apache-2.0",
            "metadata": {"version": "1.0"}
        },
        "resources": resources
    })
}

/// `skills/list`: the one skill, with the caching hints (required from 2026-07-28).
pub(super) fn list() -> Value {
    json!({"skills": [entry()], "ttlMs": 60_000, "cacheScope": "public"})
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is `params.uri`; any other URI is
/// `-32602`.
pub(super) fn get(params: &Value) -> Result<Value, ErrorObject> {
    match params.get("uri").and_then(Value::as_str) {
        Some(SKILL_URI) => Ok(json!({"skill": entry(), "ttlMs": 60_000, "cacheScope": "public"})),
        Some(other) => Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            format!("no skill at {other}"),
        )),
        None => Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            "skills/get needs a uri",
        )),
    }
}

/// `resources/read` of one of the skill's files, if `uri` is one.
pub(super) fn read(uri: &str) -> Option<Value> {
    let (uri, text, _) = FILES.iter().find(|(u, _, _)| *u == uri)?;
    Some(json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}))
}

#[cfg(all(test, feature = "skills"))]
mod tests {
    use super::*;
    use crate::skills::{verify_skill, Skill};
    use crate::types::ReadResourceResult;

    #[test]
    fn the_demo_skill_verifies() {
        for (_, text, digest) in FILES {
            assert_eq!(crate::skills::digest_of(text.as_bytes()), digest);
        }
        let skill: Skill = serde_json::from_value(entry()).unwrap();
        let reads: Vec<(&str, ReadResourceResult)> = FILES
            .iter()
            .map(|(uri, _, _)| (*uri, serde_json::from_value(read(uri).unwrap()).unwrap()))
            .collect();
        let verified = verify_skill(&skill, reads.iter().map(|(u, r)| (*u, r))).unwrap();
        assert_eq!(verified.files.len(), 2);
        assert!(get(&json!({"uri": "skill://nothing/SKILL.md"})).is_err());
    }
}
